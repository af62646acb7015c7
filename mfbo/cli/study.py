"""The ``mfbo study`` command: look into the studies of a storage file without changing it.

``mfbo study show PATH [--study NAME]``   every study (or one): direction, parameters (with
                                          their conditions), trials by state, best value and
                                          parameters
``mfbo study export PATH [--study NAME] --csv OUT.csv [--intermediate REPORTS.csv]``   one row
                                          per trial (and one per intermediate value reported)
``mfbo study best PATH [--study NAME]``   the best parameters as JSON (several objectives:
                                          the front's trials)

``PATH`` is an SQLite study file, as a path or as ``sqlite:///path``, or a PostgreSQL URL
(``postgresql://user@host/db``).  It is opened read-only (``read_only=True``), so it can be
inspected while other processes run the study.  ``--study`` may be left out when the file
holds one study.  User errors (a missing file, an unknown study) are one line on stderr and
exit code 2.  JSON output is strict JSON: a non-finite number (a categorical choice NaN or
inf) is ``null``.  In a conditional study the best parameters are the best trial's active
ones, and an exported cell is empty where the parameter is inactive in the trial.

``show`` and ``best`` summarise a study in one pass over its journal, keeping counts and the
best trial rather than every trial; an SQLite journal is read a page of events at a time, so
their memory does not grow with the number of trials.  ``export`` replays every trial (it
writes them all), from the same pages.
"""

from __future__ import annotations

import argparse
import json
import math
import numbers
import os
import sys

import numpy as np

from acquisitions.pareto import non_dominated

from ..results.result import OptimizeResult
from ..space import Integer, Space
from ..storage import SQLiteStorage, Storage, StorageUnavailable
from ..storage.base import read_in_pages
from ..study.study import STATES, Study, stored_objectives

__all__ = ["register", "open_storage", "select_studies", "StudySummary",
           "strict_json"]

SQLITE_PREFIX = "sqlite:///"

class CommandError(Exception):
    """A user error: printed as ``mfbo study: error: <message>``, exit code 2."""


def open_storage(path: str) -> Storage:
    """The study file ``path`` (or ``sqlite:///path``), or the PostgreSQL database a
    ``postgresql://`` URL names, opened read-only."""
    if "://" in path and not path.startswith(SQLITE_PREFIX):
        from ..storage.sql import SQLAlchemyStorage
        try:
            return SQLAlchemyStorage(path, read_only=True, retry_timeout=0)
        except (ValueError, ImportError, PermissionError, StorageUnavailable) as exc:
            raise CommandError(str(exc)) from None
    file = path[len(SQLITE_PREFIX):] if path.startswith(SQLITE_PREFIX) else path
    if not os.path.exists(file):
        raise CommandError(f"no study file {file!r}.")
    if os.path.isdir(file):
        raise CommandError(f"{file!r} is a directory, not a study file.")
    try:
        return SQLiteStorage(file, read_only=True)
    except (ValueError, PermissionError, StorageUnavailable) as exc:
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


def _finite(obj):
    """``obj`` with every non-finite number (NaN, inf) replaced by None, in nested dicts and
    lists too."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if isinstance(obj, numbers.Real) and not isinstance(obj, numbers.Integral) \
            and not math.isfinite(obj):
        return None
    return obj


def strict_json(obj) -> str:
    """``obj`` as strict JSON text (what any JSON parser reads): a non-finite number is
    ``null``, an object JSON has no form for its ``str``."""
    return json.dumps(_finite(obj), default=str, allow_nan=False)


class StudySummary:
    """What ``show`` and ``best`` print of study ``name``, from one pass over its journal.

    It keeps counts, the numbers of the queued configurations, the parameters of the trials
    not yet told and the best trial, never a :class:`~mfbo.Trial` per trial.  The journal's
    structure is checked as in a replay (trial ids in order, every ``tell`` of a pending
    trial with a valid state and a finite value; see :class:`~mfbo.study.Study`), the best
    trial's parameters against the space; a bad event is a :class:`CommandError` naming it.

    Attributes
    ----------
    space : Space
    config : dict
        The settings recorded with the study (``surrogate``, ``direction``, ...).
    direction : str or None
        None with several objectives (:attr:`objectives`).
    objectives : Objectives
    n_trials : int
    states : dict
        ``{"complete": n, "failed": n, "pruned": n, "pending": n}``.
    n_queued : int
        Configurations enqueued and not yet asked.
    best_id, best_value, best_params
        The complete trial with the best value in the study's direction (the first of
        ties; with constraints the best feasible one), as :attr:`mfbo.Study.best`; None when
        no trial is complete, and with several objectives.
    front : list of (int, tuple, dict)
        With several objectives: the Pareto front's trial ids, values and parameters as
        recorded, in id order.
    """

    def __init__(self, storage: Storage, name: str):
        record = storage.stored_study(name)
        if record is None:
            raise CommandError(f"no study named {name!r} in {storage.path!r}.")
        space_json, self.config = record
        self.space = Space.from_json(space_json)
        try:
            self.objectives = stored_objectives(name, self.config)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        o = self.objectives
        self.direction = o.directions[0] if o.k == 1 else None
        sign = float(o.signs[0])
        feasible: list[tuple[int, tuple]] = []  # several objectives: (id, values)
        counts = {"complete": 0, "failed": 0, "pruned": 0}
        pending: dict[int, tuple[int, dict]] = {}  # id -> (its ask event, params)
        queued: set[int] = set()
        n_enqueued = 0
        best = None  # (loss, id, value, ask event, params)
        n = 0
        try:
            for eid, kind, p in read_in_pages(storage, name):
                try:
                    if not isinstance(p, dict):
                        raise TypeError(f"payload must be a JSON object, got {p!r}")
                    if kind == "ask":
                        if _trial_id(p) != n:
                            raise ValueError(f"trial id {p['id']!r} out of order (expected "
                                             f"{n})")
                        if not isinstance(p["params"], dict):
                            raise TypeError(f"params must be a dict, got {p['params']!r}")
                        pending[n] = (eid, p["params"])
                        queued.discard(p.get("enqueued"))
                        n += 1
                    elif kind in ("tell", "claim", "report", "rung"):
                        i = _trial_id(p)
                        if i not in pending:
                            raise ValueError(f"no pending trial with id {i}")
                        if kind == "tell":
                            told = Study._checked_tell(p, o)  # the replay's own checks
                            ask, params = pending.pop(i)
                            counts[told["state"]] += 1
                            met = told["state"] == "complete" and all(
                                c <= 0 for c in told["constraints"] or ())
                            if met and o.multi:
                                feasible.append((i, told["values"], params))
                            loss = sign * told["value"] if met and not o.multi else None
                            if loss is not None and (best is None or (loss, i) < best[:2]):
                                best = (loss, i, told["value"], ask, params)
                    elif kind == "enqueue":
                        if p["number"] != n_enqueued or isinstance(p["number"], bool):
                            raise ValueError(f"enqueue number {p['number']!r} out of order "
                                             f"(expected {n_enqueued})")
                        queued.add(n_enqueued)
                        n_enqueued += 1
                    else:
                        raise ValueError(f"unknown kind of event {kind!r}")
                except (ValueError, TypeError, KeyError) as exc:
                    raise CommandError(f"study {name!r}: journal event {eid} ({kind!r}) is "
                                       f"invalid: {exc}") from None
        except ValueError as exc:  # the storage could not be read
            raise CommandError(str(exc)) from None
        self.n_trials = n
        self.states = {**counts, "pending": len(pending)}
        self.n_queued = len(queued)
        self.front = []
        if feasible:
            keep = non_dominated(o.signs * np.array([v for _, v, _ in feasible]))
            self.front = [f for f, k in zip(feasible, keep) if k]
        self.best_id = self.best_value = self.best_params = None
        if best is not None:
            _, self.best_id, self.best_value, ask, params = best
            try:
                self.best_params = self.space.validate(params)
            except (ValueError, TypeError) as exc:
                raise CommandError(f"study {name!r}: journal event {ask} ('ask') is invalid: "
                                   f"{exc}") from None


def _trial_id(payload: dict) -> int:
    """The trial id of an event's payload (an int)."""
    i = payload["id"]
    if not isinstance(i, int) or isinstance(i, bool):
        raise TypeError(f"trial id must be an integer, got {i!r}")
    return i


def _show(args) -> None:
    storage = open_storage(args.path)
    for i, name in enumerate(select_studies(storage, args.study, one=False)):
        summary = StudySummary(storage, name)
        if i:
            print()
        print(f"study {name!r}")
        if summary.objectives.plain:
            print(f"  direction   {summary.direction}")
        else:
            print(f"  objectives  {summary.objectives.describe()}")
        print(f"  surrogate   {summary.config.get('surrogate')}")
        print(f"  parameters  {', '.join(summary.space.names)}")
        for label, line in _conditions(summary.space):
            print(f"  {label:<11} {line}")
        # pruned trials are counted once there are some (studies that never prune read as before)
        shown = [s for s in STATES if s != "pruned" or summary.states[s]]
        counts = ", ".join(f"{summary.states[s]} {s}" for s in shown)
        print(f"  trials      {summary.n_trials} ({counts})")
        if summary.n_queued:
            print(f"  queued      {summary.n_queued} configuration(s) not yet asked")
        if summary.objectives.multi:
            print(f"  Pareto front {len(summary.front)} trial(s)" + "".join(
                f"\n    trial {i}: {strict_json(dict(zip(summary.objectives.labels, v)))}"
                for i, v, _ in summary.front[:10]) + ("\n    ..." if len(summary.front) > 10
                                                    else ""))
        elif summary.best_id is None:
            print("  best        none (no complete trial)")
        else:
            print(f"  best value  {summary.best_value:.10g} (trial {summary.best_id})")
            print(f"  best params {strict_json(summary.best_params)}")


def _conditions(space: Space) -> list[tuple[str, str]]:
    """The ``(label, text)`` lines ``show`` prints for the conditions of a space: where each
    conditional parameter is active, then each forbidden condition (a label on the first
    line of each)."""
    when = [f"{n}: {d.when!r}" for n, d in space.dimensions.items() if d.when is not None]
    forbidden = [repr(f) for f in space.forbidden]
    return ([("active when" if i == 0 else "", text) for i, text in enumerate(when)]
            + [("forbidden" if i == 0 else "", text) for i, text in enumerate(forbidden)])


def _check_csv(path: str, option: str = "--csv") -> None:
    """Refuse a path given as ``option`` that cannot be a file to write, before the study is
    read."""
    if path == "-":
        return
    if os.path.isdir(path):
        raise CommandError(f"{option} {path!r} is a directory; give the path of the CSV file "
                           f"to write.")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise CommandError(f"directory {directory!r} of {option} does not exist.")


def _write_csv(df, path: str, option: str) -> None:
    """Write ``df`` to ``path`` (standard output for ``'-'``); a :class:`CommandError` naming
    ``option`` when the file cannot be written."""
    if path == "-":
        df.to_csv(sys.stdout, index=False)
        return
    try:
        df.to_csv(path, index=False)
    except OSError as exc:
        raise CommandError(f"{option} {path!r} cannot be written: "
                           f"{exc.strerror or exc}.") from None


def _export(args) -> None:
    _check_csv(args.csv)
    if args.intermediate is not None:
        _check_csv(args.intermediate, "--intermediate")
        if args.intermediate == "-" and args.csv == "-":
            raise CommandError("--csv and --intermediate cannot both be standard output.")
    storage = open_storage(args.path)
    (name,) = select_studies(storage, args.study, one=True)
    try:
        study = Study.open(storage, name)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    study.close()
    import pandas as pd

    # the study's own trials, not copies: nothing else holds this study
    result = OptimizeResult(study.space, study.trials, objectives=study.objectives)
    params, extra = result.column_names()
    outcomes = result.outcome_columns(params).values()
    df = result.to_dataframe()[["id", "state", "value", *outcomes, *params.values(), "asked_at",
                                "start", "end", "duration", "worker", "origin", "error",
                                *extra.values()]]
    for n, column in params.items():  # written as integers, empty where inactive
        dim = result.space.dimensions[n]
        if isinstance(dim, Integer) and dim.when is not None and \
                -2 ** 63 <= dim.low and dim.high < 2 ** 63:
            df[column] = pd.array([t.params.get(n) for t in result.trials], dtype="Int64")
    _write_csv(df, args.csv, "--csv")
    said = "-" not in (args.csv, args.intermediate)  # no message inside a CSV on stdout
    if said:
        print(f"{len(df)} trials of study {name!r} written to {args.csv}")
    if args.intermediate is not None:
        reports = pd.DataFrame([(t.id, t.state, step, value) for t in result.trials
                                for step, value in sorted(t.intermediate_values.items())],
                               columns=["id", "state", "step", "value"])
        _write_csv(reports, args.intermediate, "--intermediate")
        if said:
            print(f"{len(reports)} intermediate values of study {name!r} written to "
                  f"{args.intermediate}")


def _best(args) -> None:
    storage = open_storage(args.path)
    (name,) = select_studies(storage, args.study, one=True)
    summary = StudySummary(storage, name)
    if summary.objectives.multi:
        if not summary.front:
            raise CommandError(f"study {name!r} has no complete feasible trial yet.")
        print(strict_json([{"id": i, "values": dict(zip(summary.objectives.labels, v)),
                            "params": summary.space.validate(params)}
                           for i, v, params in summary.front]))
        return
    if summary.best_id is None:
        raise CommandError(f"study {name!r} has no complete trial yet.")
    print(strict_json(summary.best_params))


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
    export.add_argument("--intermediate", metavar="OUT", default=None,
                        help="also write the values the trials reported, one row per report "
                             "(id, state, step, value), to this CSV file ('-' for standard "
                             "output)")
    add("best", "the best parameters of a study, as JSON", _best, one=True)
    return parser
