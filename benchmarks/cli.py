"""The ``mfbo bench``, ``mfbo report`` and ``mfbo scale`` subcommands.

``mfbo`` finds them through the entry-point group ``mfbo.commands`` (see :mod:`mfbo.cli`):
each entry point is a function that adds one subparser and sets its ``handler`` default, so
``mfbo`` never imports ``benchmarks``.  The modules doing the work are imported only when the
subcommand's parser is built.
"""

from __future__ import annotations

import argparse

__all__ = ["bench_command", "report_command", "scale_command"]


def _add(subparsers, name: str, module) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=module.__doc__.splitlines()[0],
                                   description=module.DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    module.add_arguments(parser)
    parser.set_defaults(handler=lambda args: module.run_from_args(args, prog=f"mfbo {name}"))
    return parser


def bench_command(subparsers) -> argparse.ArgumentParser:
    """``mfbo bench``: run problems x methods x seeds into a JSONL file."""
    from benchmarks import bench

    return _add(subparsers, "bench", bench)


def report_command(subparsers) -> argparse.ArgumentParser:
    """``mfbo report``: markdown tables and convergence plots from JSONL results."""
    from benchmarks import report

    return _add(subparsers, "report", report)


def scale_command(subparsers) -> argparse.ArgumentParser:
    """``mfbo scale``: optimizer overhead, scoring, memory and cold start against n."""
    from benchmarks import scaling

    return _add(subparsers, "scale", scaling)
