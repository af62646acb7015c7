"""The ``mfbo study`` command: look into the studies of a storage file without changing it.

``mfbo study show PATH [--study NAME]``   every study (or one): direction, trials by state,
                                          best value and parameters
``mfbo study export PATH [--study NAME] --csv OUT.csv``   one row per trial
``mfbo study best PATH [--study NAME]``   the best parameters as JSON

``PATH`` is an SQLite study file, as a path or as ``sqlite:///path``, or a PostgreSQL URL
(``postgresql://user@host/db``).  It is opened read-only (``read_only=True``), so it can be
inspected while other processes run the study.  ``--study`` may be left out when the file
holds one study.  User errors (a missing file, an unknown study) are one line on stderr and
exit code 2.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys

from .results import OptimizeResult
from .storage import SQLiteStorage, Storage, StorageUnavailable
from .study import Study

__all__ = ["register", "open_storage", "select_studies"]

SQLITE_PREFIX = "sqlite:///"


class CommandError(Exception):
    """A user error: printed as ``mfbo study: error: <message>``, exit code 2."""


def open_storage(path: str) -> Storage:
    """The study file ``path`` (or ``sqlite:///path``), or the PostgreSQL database a
    ``postgresql://`` URL names, opened read-only."""
    if "://" in path and not path.startswith(SQLITE_PREFIX):
        from .storage.sql import SQLAlchemyStorage
        try:
            return SQLAlchemyStorage(path, read_only=True, retry_timeout=0)
        except (ValueError, ImportError, StorageUnavailable) as exc:
            raise CommandError(str(exc)) from None
    file = path[len(SQLITE_PREFIX):] if path.startswith(SQLITE_PREFIX) else path
    if not os.path.exists(file):
        raise CommandError(f"no study file {file!r}.")
    if os.path.isdir(file):
        raise CommandError(f"{file!r} is a directory, not a study file.")
    try:
        return SQLiteStorage(file, read_only=True)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def select_studies(storage: Storage, name: str | None, one: bool) -> list[str]:
    """The study names a command works on: ``name``, or every study of the file (exactly one
    when ``one``)."""
    names = storage.studies()
    if name is not None:
        if name not in names:
            raise CommandError(f"no study named {name!r} in {storage.path!r}; it holds "
                               f"{', '.join(repr(n) for n in names) or 'no study'}.")
        return [name]
    if not names:
        raise CommandError(f"{storage.path!r} holds no study.")
    if one and len(names) > 1:
        raise CommandError(f"{storage.path!r} holds {len(names)} studies "
                           f"({', '.join(repr(n) for n in names)}); choose one with --study.")
    return names


def _result(storage: Storage, name: str) -> tuple[Study, OptimizeResult]:
    try:
        study = Study.open(storage, name)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    study.close()
    return study, OptimizeResult(study.space, study.copies(study.trials), study.direction)


def _show(args) -> None:
    storage = open_storage(args.path)
    for i, name in enumerate(select_studies(storage, args.study, one=False)):
        study, result = _result(storage, name)
        states = collections.Counter(t.state for t in result.trials)
        if i:
            print()
        print(f"study {name!r}")
        print(f"  direction   {study.direction}")
        print(f"  surrogate   {study.config.get('surrogate')}")
        print(f"  parameters  {', '.join(study.space.names)}")
        counts = ", ".join(f"{states.get(s, 0)} {s}" for s in ("complete", "failed", "pending"))
        print(f"  trials      {len(result.trials)} ({counts})")
        if study.queued:
            print(f"  queued      {len(study.queued)} configuration(s) not yet asked")
        if result.best_trial is None:
            print("  best        none (no complete trial)")
        else:
            print(f"  best value  {result.best_value:.10g} (trial {result.best_trial.id})")
            print(f"  best params {json.dumps(result.best_params, default=str)}")


def _export(args) -> None:
    storage = open_storage(args.path)
    (name,) = select_studies(storage, args.study, one=True)
    study, result = _result(storage, name)
    df = result.to_dataframe()
    first = ["id", "state", "value", *study.space.names, "asked_at", "start", "end",
             "duration", "worker", "error"]
    if len(df):
        df = df[first + [c for c in df.columns if c not in first]]
    else:
        import pandas as pd

        df = pd.DataFrame(columns=first)
    if args.csv == "-":
        df.to_csv(sys.stdout, index=False)
        return
    directory = os.path.dirname(os.path.abspath(args.csv))
    if not os.path.isdir(directory):
        raise CommandError(f"directory {directory!r} of --csv does not exist.")
    df.to_csv(args.csv, index=False)
    print(f"{len(df)} trials of study {name!r} written to {args.csv}")


def _best(args) -> None:
    storage = open_storage(args.path)
    (name,) = select_studies(storage, args.study, one=True)
    _, result = _result(storage, name)
    if result.best_trial is None:
        raise CommandError(f"study {name!r} has no complete trial yet.")
    print(json.dumps(result.best_params, default=str))


def _handler(action):
    def run(args) -> int:
        try:
            action(args)
        except CommandError as err:
            print(f"mfbo study: error: {err}", file=sys.stderr)
            return 2
        return 0
    return run


def register(subparsers) -> argparse.ArgumentParser:
    """Add ``mfbo study`` and its subcommands to the ``mfbo`` command (an entry point of the
    group ``mfbo.commands``)."""
    parser = subparsers.add_parser("study", help="inspect the studies of a storage file",
                                   description=__doc__.split("\n\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(handler=lambda args: parser.print_help() or 0)
    actions = parser.add_subparsers(title="subcommands", metavar="SUBCOMMAND")

    def add(name: str, help: str, action, one: bool):
        p = actions.add_parser(name, help=help, description=help)
        p.add_argument("path", metavar="PATH", help="the study file (a path or sqlite:///path)")
        p.add_argument("--study", metavar="NAME", default=None,
                       help="the study's name" + (" (needed when the file holds several)"
                                                  if one else " (default: every study)"))
        p.set_defaults(handler=_handler(action))
        return p

    add("show", "every study of the file (or one): direction, trials by state, best value "
        "and parameters", _show, one=False)
    export = add("export", "one CSV row per trial: id, state, value, parameters, times, "
                 "worker, error, extra fields", _export, one=True)
    export.add_argument("--csv", metavar="OUT", required=True,
                        help="the CSV file to write ('-' for standard output)")
    add("best", "the best parameters of a study, as JSON", _best, one=True)
    return parser
