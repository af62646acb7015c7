"""The ``mfbo bench``, ``mfbo report`` and ``mfbo scale`` subcommands, and the same commands as
``python -m benchmarks.harness.bench`` / ``benchmarks.harness.report`` /
``benchmarks.harness.scaling``.

``mfbo`` finds the subcommands through the entry-point group ``mfbo.commands`` (see
:mod:`mfbo.cli`): each entry point is a function that adds one subparser and sets its
``handler`` default, so ``mfbo`` never imports ``benchmarks``.  The module doing the work is
imported only when its subparser is built.

A command module (:data:`COMMANDS`) has a ``DESCRIPTION``, ``add_arguments(parser)`` and
``run_from_args(args)``, which raises :class:`CommandError` for a user error; the helpers here
give both entry points the same parser and turn such an error into one line on stderr and
exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType

__all__ = ["COMMANDS", "CommandError", "bench_command", "command_main", "report_command",
           "scale_command"]

#: ``mfbo`` subcommand -> the module doing the work
COMMANDS = {"bench": "benchmarks.harness.bench", "report": "benchmarks.harness.report",
            "scale": "benchmarks.harness.scaling"}


class CommandError(Exception):
    """A user error of a command (bad argument, missing file): printed as
    ``<prog>: error: <message>``, exit code 2, no traceback."""


def _parser(parser: argparse.ArgumentParser, module: ModuleType) -> argparse.ArgumentParser:
    parser.description = module.DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    module.add_arguments(parser)
    return parser


def _run(module: ModuleType, args: argparse.Namespace, prog: str) -> int:
    try:
        module.run_from_args(args)
    except CommandError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    return 0


def command_main(module: ModuleType, argv: list[str] | None = None) -> int:
    """``python -m <module> ...``: parse ``argv`` (default ``sys.argv[1:]``) and run; the exit
    code."""
    prog = f"python -m {module.__spec__.name}"
    parser = _parser(argparse.ArgumentParser(prog=prog), module)
    return _run(module, parser.parse_args(argv), prog)


def _add(subparsers, name: str) -> argparse.ArgumentParser:
    module = importlib.import_module(COMMANDS[name])
    parser = _parser(subparsers.add_parser(name, help=module.__doc__.splitlines()[0]), module)
    parser.set_defaults(handler=lambda args: _run(module, args, f"mfbo {name}"))
    return parser


def bench_command(subparsers) -> argparse.ArgumentParser:
    """``mfbo bench``: run problems x methods x seeds into a JSONL file."""
    return _add(subparsers, "bench")


def report_command(subparsers) -> argparse.ArgumentParser:
    """``mfbo report``: markdown tables and convergence plots from JSONL results."""
    return _add(subparsers, "report")


def scale_command(subparsers) -> argparse.ArgumentParser:
    """``mfbo scale``: optimizer overhead, scoring, memory and cold start against n."""
    return _add(subparsers, "scale")
