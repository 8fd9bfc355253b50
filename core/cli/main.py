"""The ``python -m core`` parser and entry point: every command module registers its sub-commands;
a known error (``core.errors.KNOWN_ERRORS``) prints its message and exits with status 2."""
from __future__ import annotations

import argparse
import sys

from core.cli import annotations as annotation_commands
from core.cli import evaluate, import_lightrag, judge, query, workspace_commands
from core.cli.base import EXIT_CANCELLED, EXIT_ERROR, common_flags
from core.errors import KNOWN_ERRORS

COMMAND_MODULES = (workspace_commands, query, evaluate, annotation_commands, judge, import_lightrag)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core",
                                     description="RAGScope: graph-based RAG indexes and retrieval modes.")
    common = common_flags()
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        module.add_commands(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:  # building the parser reads RAGSCOPE_WORKSPACE, which may be refused
        args = build_parser().parse_args(argv)
        return args.run(args)
    except KNOWN_ERRORS as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return EXIT_CANCELLED
