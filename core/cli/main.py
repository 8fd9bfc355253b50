"""The ``python -m core`` parser and entry point: every command module registers its sub-commands;
a known error (``core.errors.KNOWN_ERRORS``) prints its message and exits with status 2.

The modules whose help lists the retrieval modes (query, compare, eval, judge) import the mode registry,
and with it the query-side extraction (spaCy); a command of the workspace or annotation modules (status,
docs, export, graph-quality, annotations, index, ...) is parsed without importing them, so the read-only
commands start without any model library."""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Optional, Sequence

from core.cli.base import EXIT_CANCELLED, EXIT_ERROR, common_flags
from core.cli.terminal import safe_terminal
from core.errors import KNOWN_ERRORS

LIGHT_MODULES = ("core.cli.workspace_commands", "core.cli.annotations", "core.cli.edit")
MODE_MODULES = ("core.cli.query", "core.cli.evaluate", "core.cli.judge", "core.cli.import_lightrag", "core.cli.router")
COMMAND_MODULES = LIGHT_MODULES[:1] + MODE_MODULES[:2] + LIGHT_MODULES[1:] + MODE_MODULES[2:]  # help order


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core",
                                     description="RAGScope: graph-based RAG indexes and retrieval modes.")
    common = common_flags()
    sub = parser.add_subparsers(dest="command", required=True)
    for name in modules:
        importlib.import_module(name).add_commands(sub, common)
    return parser


def _parser_for(argv: Optional[Sequence[str]]) -> argparse.ArgumentParser:
    """The light parser when the command is one of its commands, else the whole one."""
    words = list(sys.argv[1:] if argv is None else argv)
    command = next((w for w in words if not w.startswith("-")), None)
    light = build_parser(LIGHT_MODULES)
    subparsers = next(a for a in light._actions if isinstance(a, argparse._SubParsersAction))
    return light if command in subparsers.choices else build_parser()


def main(argv: list[str] | None = None) -> int:
    with safe_terminal():  # uploaded text cannot drive the terminal (core.cli.terminal)
        return _main(argv)


def _main(argv: list[str] | None = None) -> int:
    try:  # building the parser reads RAGSCOPE_WORKSPACE, which may be refused
        args = _parser_for(argv).parse_args(argv)
        return args.run(args)
    except KNOWN_ERRORS as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return EXIT_CANCELLED
