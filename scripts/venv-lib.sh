# Shared by scripts/install-embeddings.sh, install-lightrag.sh and install-oidc.sh (sourced, not run):
# building a package set in a virtual environment of its own OUTSIDE the repository, reused when ready.
#
# A script sets PY (the python that makes the venv), defines `ready` (exit 0 when $VENV is usable) and
# then calls, in order:
#   venv_init PREFIX VENV SCRIPT     names the venv; sets LOG ($VENV.install.log) and MARKER
#   venv_start PRINTED WHAT MESSAGE [--check]
#                                    ready: print PRINTED, exit 0; --check: exit 1 saying why it is not
#                                    ready (never built, or the last build's log); else print MESSAGE and
#                                    start a fresh build (old venv and log removed)
#   venv_step STEP COMMAND...        run COMMAND (output to the log); on failure say FAILED (STEP) with
#                                    the log's last lines and exit 1
#   venv_done PRINTED                mark the venv ready, say how long it took and its size, print PRINTED
# The pip progress bar is off and pip's version check skipped (VENV_PIP: the venv's pip install).

venv_init() {
  VENV_PREFIX=$1
  VENV=$2
  VENV_SCRIPT=$3
  LOG="$VENV.install.log"
  MARKER="$VENV/.ragscope-ready"
  VENV_PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check --progress-bar off)
}

# The log's last N lines, without pip's noise about ignored config entries.
venv_log_tail() {
  grep -v 'is ignored: it is neither' "$LOG" | tail -n "$1"
}

venv_start() {
  local printed=$1 what=$2 message=$3
  if ready; then
    echo "$printed"
    exit 0
  fi
  if [ "${4:-}" = "--check" ]; then
    if [ -f "$LOG" ]; then
      echo "the $what environment at $VENV is not ready; its last build failed: $(venv_log_tail 3 | tr '\n' ' ')" >&2
    else
      echo "the $what environment at $VENV is not built (run bash scripts/$VENV_SCRIPT)" >&2
    fi
    exit 1
  fi
  VENV_STARTED=$(date +%s)
  echo "$VENV_PREFIX: $message" >&2
  mkdir -p "$(dirname "$VENV")"
  rm -rf "$VENV"
  : > "$LOG"
  venv_step "$PY -m venv" "$PY" -m venv "$VENV"
}

venv_step() {
  local step=$1
  shift
  if ! "$@" >>"$LOG" 2>&1; then
    echo "$VENV_PREFIX: FAILED ($step); last lines of $LOG:" >&2
    venv_log_tail 15 >&2
    exit 1
  fi
}

venv_done() {
  touch "$MARKER"
  echo "$VENV_PREFIX: ready in $(( $(date +%s) - VENV_STARTED ))s, $(du -sh "$VENV" 2>/dev/null | cut -f1) in $VENV" >&2
  echo "$1"
}
