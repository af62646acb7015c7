"""Run benchmark problems x methods x seeds, one JSON line per run.

``mfbo bench --problem branin,lda-grid --method mondrian,rf-smac,random --seeds 10
--out results.jsonl`` (or ``python -m benchmarks.harness.bench ...``), then ``mfbo report``.  A
suite name stands for its problems: ``--problem sklearn-tune:test`` or ``--suite mixed`` (see
:data:`benchmarks.problems.problems.SUITES`).  The budget is each problem's own unless given, as a
number of evaluations or as a multiple of the problem's dimension, ``--budget 100D`` or
``--budget 20D+20`` (the bbob protocol's two budgets).

Every finished run is appended to the output file as one line and forced to disk at once, so a
killed benchmark loses at most the run in progress; calling again with the same file skips
every (problem, method, seed, budget) already in it.  Several runs may share one file at the
same time: they split the jobs between them, each job run once (see
:mod:`benchmarks.harness.results_file`; the locks live in ``<out>.lock``).  A line holds:

``problem``, ``method``, ``seed``, ``budget``, ``kind`` (continuous / random-grid / table /
mixed),
``grid`` (the random grid's index, ``seed % 3``, else null), ``continuous`` (the method searched
the continuous box rather than the problem's candidate set: always for peers on random-grid
problems), ``n_evals``, ``n_failed``, ``values`` (objective value of every evaluation, null when
it failed), ``trace`` (best so far after each evaluation), ``best``, ``optimum``, ``target``
(the best-so-far value that counts as reaching the optimum, see
:meth:`benchmarks.problems.problems.Problem.target`), ``reached``, ``evals_to_target`` (``optimum``,
``target``, ``reached`` and ``evals_to_target`` are null when the problem's minimum is unknown:
the report then measures against the best value any run found), ``wall_s``,
``objective_time_s``, ``optimizer_time_s`` (wall time outside the objective), ``finished_at``
and ``versions``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import sys
from typing import Iterable

from benchmarks.harness.cli import CommandError, command_main
from benchmarks.harness.environment import versions
from benchmarks.harness.results_file import ResultsFile, ResultsFileError, read_records, record_key

DESCRIPTION = """\
Run every (problem, method, seed) with a budget of evaluations and append one JSON line per
run to --out (written to disk as soon as the run ends). Runs already in the file, same problem,
method, seed and budget, are skipped, so an interrupted benchmark resumes where it stopped.
Several mfbo bench commands may share one --out at the same time: they split the runs, each
run is done once (they coordinate through the file --out.lock).
A suite name (sklearn-tune, mixed, bbob, tune-world, conditional; SUITE:dev or SUITE:test for
one split) stands for its problems, in --problem or --suite; any bbob problem bbob-fFF-dDD-iII
(function 1-24, dimension 2, 3, 5, 10, 20 or 40, instance; e.g. bbob-f03-d05-i07) can be
named.
--budget 100D gives each problem 100 times its dimension (20D+20: the bbob default).
Peers (smac, optuna, optuna-mv, optuna-group, hyperopt, skopt-forest, skopt-gp) and the bbob
problems (COCO's cocoex) need the peers extra: pip install "mfbo[peers]" (the bbob problems
alone: "mfbo[bbob]").
Summarise the file with: mfbo report FILE --out DIR."""

__all__ = ["run", "run_one", "budget_of", "read_records", "record_key", "add_arguments",
           "run_from_args", "main"]

_BUDGET_RULE = re.compile(r"(\d+)\s*\*?\s*D\s*(?:\+\s*(\d+))?", re.IGNORECASE)


def _as_names(value) -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    names = [v.strip() for v in value if v and v.strip()]
    if not names:
        raise ValueError("give at least one name.")
    return list(dict.fromkeys(names))


def _as_seeds(seeds) -> list[int]:
    if isinstance(seeds, bool):
        raise TypeError(f"seeds must be a count or a list of ints, got {seeds!r}.")
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError(f"seeds must be a positive count, got {seeds}.")
        return list(range(seeds))
    out = [int(s) for s in seeds]
    if not out:
        raise ValueError("seeds must not be empty.")
    return list(dict.fromkeys(out))


def _as_budget(budget) -> int | tuple[int, int] | None:
    """``None``, a positive int, or ``(k, c)`` for the rule ``k D + c`` (from ``"100D"``,
    ``"20D+20"``, ``"20*D + 20"``; a string of digits is an int); ``ValueError`` otherwise."""
    if budget is None:
        return None
    if isinstance(budget, str):
        text = budget.strip()
        if text.isdigit():
            budget = int(text)
        else:
            m = _BUDGET_RULE.fullmatch(text)
            if m is None or int(m.group(1)) < 1:
                raise ValueError(f"budget must be a positive integer or a multiple of the "
                                 f"problem's dimension such as '100D' or '20D+20', got "
                                 f"{budget!r}.")
            return int(m.group(1)), int(m.group(2) or 0)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget must be a positive integer, a rule such as '100D' or "
                         f"'20D+20', or None, got {budget!r}.")
    return budget


def budget_of(problem, budget: int | str | None = None) -> int:
    """The evaluations of a run of ``problem``: its own budget when ``budget`` is None, else
    ``budget``, an int or a rule ``"kD"`` / ``"kD+c"`` (``k`` times the problem's dimension,
    plus ``c``)."""
    rule = _as_budget(budget)
    if rule is None:
        return int(problem.budget)
    if isinstance(rule, tuple):
        return rule[0] * len(problem.space) + rule[1]
    return rule


def _versions(method) -> dict:
    return {"python": platform.python_version(), **versions("mfbo", "numpy"),
            **method.versions()}


def run_one(problem, method, seed: int, budget: int | str | None = None) -> dict:
    """Run one (problem, method, seed) and return its record (see the module docstring).

    ``problem`` and ``method`` are names or :class:`~benchmarks.problems.problems.Problem` /
    :class:`~benchmarks.harness.methods.Method` objects; ``budget`` defaults to the problem's (an
    int, or a rule such as ``"100D"``, see :func:`budget_of`).
    """
    from benchmarks.harness.methods import Method, get_method, run_method
    from benchmarks.problems.problems import get_problem

    p = get_problem(problem) if isinstance(problem, str) else problem
    m = method if isinstance(method, Method) else get_method(method)
    budget = budget_of(p, budget)
    r = run_method(m, p, budget, int(seed))
    trace, best = [], None
    for v in r.values:
        if v is not None and (best is None or v < best):
            best = v
        trace.append(best)
    target = p.target(int(seed))
    hit = None if target is None else next(
        (i + 1 for i, b in enumerate(trace) if b is not None and b <= target), None)
    return {
        "problem": p.name, "method": m.name, "seed": int(seed), "budget": budget,
        "kind": p.kind, "grid": r.grid, "continuous": r.continuous,
        "n_evals": len(r.values), "n_failed": sum(v is None for v in r.values),
        "best": best, "optimum": p.optimum, "target": target,
        "reached": None if target is None else hit is not None,
        "evals_to_target": hit, "optimizer_time_s": r.optimizer_time_s, "wall_s": r.wall_s,
        "objective_time_s": r.objective_time_s, "trace": trace, "values": r.values,
        "finished_at": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"),
        "versions": _versions(m),
    }


def run(problems: str | Iterable[str], methods: str | Iterable[str],
        budget: int | str | None = None,
        seeds: int | Iterable[int] = 10, out: str | os.PathLike = "results.jsonl",
        progress: bool = True, data_home: str | os.PathLike | None = None) -> list[dict]:
    """Run every (problem, method, seed) not yet in ``out``, appending one JSON line each.

    Parameters
    ----------
    problems, methods : str or iterable of str
        Names (a comma-separated string or a list) from
        ``benchmarks.problems.problems.PROBLEMS`` and
        ``benchmarks.harness.methods.METHODS``; a suite name (``"sklearn-tune"``, ``"mixed:dev"``)
        stands for its problems (:func:`benchmarks.problems.problems.expand_problems`).
    budget : int, str or None, default=None
        Evaluations per run; ``None``: each problem's own (HPOlib's: Branin and Hartmann6 200,
        LDA grid 50, SVM grid 100; a bbob problem 20 D + 20); a string ``"kD"`` or
        ``"kD+c"``: ``k`` times each problem's dimension, plus ``c`` (``"100D"``).
    seeds : int or iterable of int, default=10
        A count ``n`` (seeds ``0..n-1``) or the seeds themselves.
    out : path, default="results.jsonl"
        The results file; existing lines with the same (problem, method, seed, budget) are
        kept and those runs skipped.  Other processes may run into the same file at the same
        time: each run is done by one of them, and every call returns once all its runs are
        in the file.  ``<out>.lock`` is created beside it.
    progress : bool, default=True
        A tqdm bar over the runs (on stderr).
    data_home : path or None, default=None
        Where the grid tables and data sets are looked for first (then ``$MFBO_DATA_DIR``,
        then the cache).

    Returns
    -------
    list of dict
        The records of every requested run, from the file, just made, or made meanwhile by
        another process, in the order problems x methods x seeds.

    Raises
    ------
    ValueError
        An unknown problem or method name (before anything runs).
    benchmarks.harness.methods.PeerUnavailable
        A peer method whose package is not installed (before anything runs).
    benchmarks.problems.bbob.CocoexUnavailable
        A bbob problem is asked for and COCO's ``cocoex`` is not installed (before anything
        runs).
    FileNotFoundError
        A problem's data file is missing (the message says where to put it).
    benchmarks.problems.data.ChecksumError
        A problem's data file is damaged (before anything runs).
    benchmarks.harness.results_file.ResultsFileError
        ``out`` cannot be written (before anything runs).
    """
    from tqdm.auto import tqdm

    from benchmarks.harness.methods import get_method
    from benchmarks.problems.problems import expand_problems, get_problem

    _as_budget(budget)  # a bad budget fails before anything runs
    probs = [get_problem(n) for n in expand_problems(_as_names(problems))]
    meths = [get_method(n) for n in _as_names(methods)]
    seed_list = _as_seeds(seeds)
    for m in meths:
        m.check_available()
    for p in probs:
        if hasattr(p, "load"):  # tables, data sets, cocoex: checked before any run
            p.load(data_home)
    jobs = {(p.name, m.name, s, budget_of(p, budget)): (p, m)
            for p in probs for m in meths for s in seed_list}
    keys = list(jobs)
    with ResultsFile(out) as results:  # fails here, before any run, if out is not writable
        bar = tqdm(total=len(keys), unit="run", disable=not progress, file=sys.stderr,
                   desc="bench")
        try:
            while True:
                with results.locked():
                    done = results.refresh()
                    pending = [k for k in keys if k not in done]
                    bar.n = len(keys) - len(pending)
                    bar.refresh()
                    if not pending:
                        break
                    key = results.claim(pending)
                if key is None:
                    # every job left is being run by another process: wait for one to end
                    # (finished, or its process died and the job is free again)
                    results.wait(pending[0])
                    continue
                try:
                    bar.set_postfix_str(f"{key[0]} {key[1]} seed={key[2]}", refresh=True)
                    rec = run_one(*jobs[key], key[2], key[3])
                    with results.locked():
                        results.append(rec)
                finally:
                    results.release()
        finally:
            bar.close()
    return [done[k] for k in keys]


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``mfbo bench`` / ``python -m benchmarks.harness.bench``."""
    from benchmarks.harness.methods import METHODS
    from benchmarks.problems.problems import PROBLEMS, SUITES, split_of

    single = [n for n in PROBLEMS if split_of(n) is None]
    suites = [f"{s.name} ({len(s.dev)} dev + {len(s.test)} test"
              + (f"; run by its own command: {s.command.split(' --')[0]})" if s.command else ")")
              for s in SUITES.values()]
    parser.add_argument("--problem", "--problems", dest="problem", default=None,
                        help="comma-separated problems or suites (default: branin, unless "
                             "--suite is given); a problem: " + ", ".join(single)
                             + "; a suite (all its problems; SUITE:dev or SUITE:test for one "
                             "split): " + ", ".join(suites))
    parser.add_argument("--suite", "--suites", dest="suite", default=None,
                        help="comma-separated suites (or SUITE:dev, SUITE:test), run after "
                             "--problem's problems")
    parser.add_argument("--method", "--methods", dest="method", default="mondrian,rf-smac,random",
                        help="comma-separated methods (default: mondrian,rf-smac,random); one "
                             "of: " + ", ".join(METHODS))
    parser.add_argument("--budget", default=None,
                        help="evaluations per run, a number or a multiple of each problem's "
                             "dimension: 100D, 20D+20 (default: the problem's, HPOlib's: "
                             "branin and hartmann6 200, lda-grid 50, svm-grid 100; "
                             "sklearn-tune 100, bayesmark's; mixed 200, its pipeline choices "
                             "100; bbob 20D+20)")
    parser.add_argument("--seeds", type=int, default=10,
                        help="runs per problem and method, seeds 0..N-1 (default: 10)")
    parser.add_argument("--out", default="results.jsonl",
                        help="JSONL results file, appended to; finished runs in it are "
                             "skipped (default: results.jsonl)")
    parser.add_argument("--data-home", default=None,
                        help="directory holding the data files (lda_on_grid.csv, "
                             "svm_on_grid.csv, cal_housing.data; default: $MFBO_DATA_DIR, "
                             "then the user cache)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def _problems_of(args: argparse.Namespace) -> list[str]:
    from benchmarks.problems.problems import SUITES

    names = _as_names(args.problem) if args.problem else []
    if args.suite:
        suites = _as_names(args.suite)
        unknown = [n for n in suites if n.partition(":")[0] not in SUITES]
        if unknown:
            raise ValueError(f"unknown suite {unknown[0]!r}; suite must be one of "
                             f"{sorted(SUITES)} (optionally ':dev' or ':test').")
        names += suites
    return names or ["branin"]


def run_from_args(args: argparse.Namespace) -> None:
    """:func:`run` from parsed arguments (:class:`~benchmarks.harness.cli.CommandError` for a bad
    name, a missing peer or data file, or an unwritable ``--out``)."""
    from benchmarks.harness.methods import PeerUnavailable
    from benchmarks.problems.bbob import CocoexUnavailable

    try:
        records = run(_problems_of(args), args.method, budget=args.budget, seeds=args.seeds,
                      out=args.out, progress=not args.no_progress, data_home=args.data_home)
    except ResultsFileError as err:
        raise CommandError(f"--out {err.path!r} is not writable ({err.reason}); nothing was "
                           f"run.") from err
    except (ValueError, TypeError, PeerUnavailable, CocoexUnavailable, OSError) as err:
        # OSError: a missing or damaged data file (FileNotFoundError, ChecksumError)
        raise CommandError(str(err)) from err
    print(f"{len(records)} runs in {args.out}; summarise them with: mfbo report {args.out}")


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.harness.bench``: the same as ``mfbo bench``."""
    return command_main(sys.modules[__name__], argv)


if __name__ == "__main__":
    sys.exit(main())
