"""The ``mfbo`` command.

Subcommands are plug-ins: every entry point of the group ``mfbo.commands`` (declared in a
distribution's ``pyproject.toml``) is a function ``register(subparsers)`` that adds one parser
to the ``argparse`` subparsers action and sets its default ``handler``, a function
``handler(args) -> int`` (the exit code).  This keeps the layering: ``mfbo`` knows no
subcommand, the ``benchmarks`` package registers ``bench`` and ``report``.  A plug-in that
fails to load is reported as a warning and left out; the other commands keep working.

Output into a pipe closed by its reader (``mfbo study export PATH --csv - | head -1``) ends
the command quietly with exit code 1, as the Python documentation advises (see "Note on
SIGPIPE" in the ``signal`` module's documentation).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from importlib.metadata import entry_points

from .. import __version__

COMMAND_GROUP = "mfbo.commands"


def _command_entry_points() -> list:
    seen: dict[str, object] = {}
    for ep in entry_points(group=COMMAND_GROUP):
        seen.setdefault(ep.name, ep)  # the same plug-in may be visible twice on sys.path
    return [seen[name] for name in sorted(seen)]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mfbo",
        description="Bayesian optimization with online Mondrian forest surrogates.",
    )
    parser.add_argument("--version", action="version", version=f"mfbo {__version__}")
    eps = _command_entry_points()
    if eps:
        subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
        for ep in eps:
            try:
                ep.load()(subparsers)
            except Exception as exc:  # a broken plug-in must not break the others
                warnings.warn(f"mfbo: command {ep.name!r} ({ep.value}) is unavailable: "
                              f"{type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)
    return parser


#: the exit code of a command whose standard output was closed by its reader
BROKEN_PIPE = 1


def _stdout_to_devnull() -> None:
    """Point standard output's file descriptor at the null device, so that the interpreter's
    flush of what is still buffered, at exit, does not fail again (and print a traceback)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (captured, replaced)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    """Run the ``mfbo`` command with the arguments ``argv`` (None: ``sys.argv[1:]``);
    returns its exit code."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.print_help()
            return 0
        code = int(handler(args) or 0)
        sys.stdout.flush()  # a closed pipe is found here when the output was short
        return code
    except BrokenPipeError:
        _stdout_to_devnull()
        return BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
