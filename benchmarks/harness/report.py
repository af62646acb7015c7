"""Summarise benchmark results (JSONL) as markdown tables and convergence plots.

The input is what :mod:`benchmarks.harness.bench` writes.

``mfbo report results.jsonl [more.jsonl ...] --out DIR`` (or
``python -m benchmarks.harness.report``) writes ``DIR/report.md`` (also printed) and one convergence plot per problem,
``DIR/<problem>.png`` (``DIR/<problem>_<budget>.png`` when a problem was run with several
budgets).

One table per problem and budget, one row per method:

* **runs**: the number of seeds (a run found in several files counts once, the last one read);
* **best**: mean ± standard deviation over the runs of the final best value (sample sd,
  ``ddof=1``; 0 for a single run);
* **at optimum**: the runs whose best reached the problem's target: the exact table minimum
  on ``lda-grid``/``svm-grid``; ``f* + 1e-3 |f*|`` on continuous problems (``f* + 1e-3`` when
  ``f* = 0``); on ``branin-grid``/``hartmann6-grid`` the easier of that and the minimum of the
  run's random grid, so grid and continuous searches face one threshold (the ``target`` field of
  each record);
* **median evals to optimum**: over all runs, a run that never reaches the target counting as
  infinitely many, so "—" unless more than half the runs reach it;
* **optimizer s/run**: mean wall time per run spent outside the objective;
* **optimizer ms/eval**: the median over the runs of that time divided by the run's number of
  evaluations (what one ask and tell cost, the proposal's whole overhead).

A problem whose minimum is unknown (the ``sklearn-tune`` problems, the pipeline choices of
``mixed``: records with a null ``optimum``) is measured against the best value any run of the
report found for it (same problem and budget, every method): that value stands for f*, its
target is ``f* + 1e-3 |f*|`` as on a continuous problem, and the table says so.

For every suite split with runs (see :data:`benchmarks.problems.problems.SUITES`), a summary table
comes first, one row per method over the split's problems: the **mean rank** of its mean final
best among the methods run on a problem (ties share their mean rank), and its **normalised
regret** ``(mean best - best method's mean best) / (random search's mean best - best
method's mean best)``, 0 for the best method and 1 for random search (defined where
``random`` was run and did not tie the best), mean and worst over the problems, and the
**worst run**: the single run (problem, seed) whose own final best, put in the place of the
mean best, gives the largest normalised regret; its **collapsed runs**, those whose own final
best has a normalised regret of 0.5 or more (they ended nearer random search's mean than the
best method's), counted over all runs and again without the **fragile** problems (where
random search's mean is within one standard deviation of its runs of the best mean, so a
normalised regret is mostly noise; the table names them); the 90th percentile of its runs'
normalised regrets; and the **optimizer ms/eval**, the median over all its runs of the
split, so quality, robustness and cost of each method sit side by side.

Then the **paired tests** of the split (:mod:`benchmarks.harness.paired`): the reference method
(``--reference``, default ``mondrian``) against every other method, runs paired by problem,
budget and seed, final best values compared (each difference scaled by the problem's spread),
Wilcoxon's signed-rank test two-sided: pairs, the reference's wins / ties / losses, the
p-value and whether it is significant at 0.05 and which way.  Once over the whole split,
then once per problem family (:func:`benchmarks.problems.problems.family_of`: an ``sklearn-tune``
problem's model and metric, a bbob problem's function and dimension, a ``mixed`` problem's
kind), followed by the families where the reference is significantly worse than random
search.  Every table and heading names the split its numbers come from; a problem's own
table names its suite and split too (problems outside a suite have none).

A method marked "(continuous box)" searched the continuous box of a random-grid problem (peers
cannot take a candidate set).  The plots show the mean ± standard error over runs of the gap
``best so far - f*``, on a log scale (a curve stops where its mean gap reaches 0).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings
from pathlib import Path
from typing import Iterable

import numpy as np

from benchmarks.harness.cli import CommandError, command_main
from benchmarks.harness.figures import figure, save
from benchmarks.harness.results_file import read_records, record_key
from benchmarks.harness.tables import markdown_table

DESCRIPTION = """\
Read one or more JSONL results files of mfbo bench and write DIR/report.md (also printed):
one table per problem with, per method, the runs, mean +- sd of the final best value, the runs
that reached the optimum (the exact table minimum on lda-grid/svm-grid; f* + 1e-3|f*| on
continuous problems; on random grids the easier of that and the grid's minimum), the median
number of evaluations to reach it, the mean optimizer time per run and the median optimizer
time per evaluation; and DIR/<problem>.png, the mean +- s.e. of the gap best-so-far - optimum
against the evaluation, log scale.  A problem whose optimum is unknown is measured against the
best value any run found.  Suite splits get a summary first: mean rank, normalised regret (0 =
best method, 1 = random), the worst run and the median optimizer time per evaluation; then
paired Wilcoxon signed-rank tests of --reference against every other method (runs paired by
problem, budget and seed), over the split and per problem family."""

__all__ = ["check_record", "load_records", "ms_per_eval", "summarize", "suite_summary",
           "to_markdown", "plot_problem", "report", "add_arguments", "run_from_args", "main"]


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_record(rec: dict) -> None:
    """Raise ``KeyError``/``TypeError`` if ``rec`` lacks a field the report reads or holds one
    of the wrong type (the identifying fields are checked by ``record_key``)."""
    for name in ("best", "optimum", "target", "trace", "evals_to_target", "optimizer_time_s"):
        if name not in rec:
            raise KeyError(name)
    if not _is_number(rec["optimizer_time_s"]):
        raise TypeError(f"optimizer_time_s is {rec['optimizer_time_s']!r}, not a number")
    n = rec.get("n_evals", 0)
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise TypeError(f"n_evals is {n!r}, not a count")
    for name in ("optimum", "target"):  # null: the problem's minimum is unknown
        if rec[name] is not None and not _is_number(rec[name]):
            raise TypeError(f"{name} is {rec[name]!r}, not a number or null")
    if rec["best"] is not None and not _is_number(rec["best"]):
        raise TypeError(f"best is {rec['best']!r}, not a number or null")
    hit = rec["evals_to_target"]
    if hit is not None and (not isinstance(hit, int) or isinstance(hit, bool)):
        raise TypeError(f"evals_to_target is {hit!r}, not an integer or null")
    if not isinstance(rec["trace"], list) or not all(v is None or _is_number(v)
                                                     for v in rec["trace"]):
        raise TypeError("trace is not a list of numbers or nulls")


def load_records(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[dict]:
    """Every record of the files, in order; a (problem, method, seed, budget) seen twice keeps
    the last.  A line that is not a complete record (see :func:`check_record`) is skipped with
    a warning naming the file and line.  ``FileNotFoundError`` for a missing file."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    by_key: dict[tuple, dict] = {}
    for path in paths:
        if not Path(path).is_file():
            raise FileNotFoundError(f"no results file {os.fspath(path)!r}.")
        for rec in read_records(path, validate=check_record):
            by_key.pop(record_key(rec), None)
            by_key[record_key(rec)] = rec
    return list(by_key.values())


def _label(rec: dict) -> str:
    if rec.get("continuous") and rec.get("kind") == "random-grid":
        return f"{rec['method']} (continuous box)"
    return rec["method"]


def _groups(records: list[dict]) -> dict[tuple, dict[str, list[dict]]]:
    """``(problem, budget) -> label -> records sorted by seed``, in order of appearance."""
    out: dict[tuple, dict[str, list[dict]]] = {}
    for rec in records:
        out.setdefault((rec["problem"], int(rec["budget"])), {}).setdefault(
            _label(rec), []).append(rec)
    for methods in out.values():
        for runs in methods.values():
            runs.sort(key=lambda r: r["seed"])
    return out


def _with_reference(methods: dict[str, list[dict]]) -> tuple[dict[str, list[dict]], bool]:
    """The runs of one (problem, budget) as they are, if the optimum is known; else copies
    whose ``optimum`` is the best value any of them found, ``target`` that plus ``1e-3 |f*|``
    (``1e-3`` at 0) and ``evals_to_target`` read from the trace.  Second value: whether the
    optimum was estimated so."""
    runs = [r for rs in methods.values() for r in rs]
    if all(r["optimum"] is not None and r["target"] is not None for r in runs):
        return methods, False
    bests = [r["best"] for r in runs if r["best"] is not None]
    if not bests:
        return methods, False
    ref = float(min(bests))
    target = ref + (1e-3 * abs(ref) if ref != 0 else 1e-3)
    out = {}
    for label, rs in methods.items():
        out[label] = []
        for r in rs:
            hit = next((i + 1 for i, b in enumerate(r["trace"])
                        if b is not None and b <= target), None)
            out[label].append(dict(r, optimum=ref, target=target, evals_to_target=hit,
                                   reached=hit is not None))
    return out, True


def ms_per_eval(rec: dict) -> float | None:
    """Milliseconds of optimizer time (wall time outside the objective) per evaluation of one
    run; ``None`` for a run without evaluations.  The evaluations are ``n_evals`` (the length
    of the trace in records written before that field)."""
    n = rec.get("n_evals", len(rec["trace"]))
    return 1e3 * rec["optimizer_time_s"] / n if n else None


def _median(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.median(kept)) if kept else None


def summarize(runs: list[dict]) -> dict:
    """The row of one method: n, mean and sd of best, runs at the optimum, median evaluations
    to the optimum (inf when not reached by more than half), mean optimizer time per run and
    median optimizer milliseconds per evaluation (:func:`ms_per_eval`)."""
    best = np.array([r["best"] if r["best"] is not None else np.nan for r in runs], dtype=float)
    hits = [r.get("evals_to_target") for r in runs]
    evals = np.array([h if h is not None else np.inf for h in hits], dtype=float)
    n = len(runs)
    return {"n": n, "best_mean": float(np.nanmean(best)) if np.isfinite(best).any() else None,
            "best_sd": float(np.nanstd(best, ddof=1)) if np.isfinite(best).sum() > 1 else 0.0,
            "reached": sum(h is not None for h in hits),
            "median_evals": float(np.median(evals)),
            "optimizer_time_s": float(np.mean([r["optimizer_time_s"] for r in runs])),
            "ms_per_eval": _median(ms_per_eval(r) for r in runs)}


def _fmt(x: float | None, digits: int = 6) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:.{digits}g}"


#: a run whose normalised regret is at least this has collapsed: it ended nearer random
#: search's mean result than the best method's
COLLAPSE = 0.5


def suite_summary(groups: dict[tuple, dict[str, list[dict]]]) -> dict[str, dict]:
    """Per method over the ``(problem, budget) -> label -> runs`` groups of one suite split:
    ``problems`` (how many it ran on among those with 2+ methods), ``mean_rank``,
    ``regrets`` (normalised regret per problem where defined), ``mean_regret``,
    ``worst_regret`` and ``worst_run`` (``(problem, budget, seed, normalised regret of that
    run's final best)`` of the run with the largest; ``None`` where undefined),
    ``run_regrets`` (each run's own normalised regret), ``collapsed`` and ``runs`` (how many
    of them are at least :data:`COLLAPSE`, and of how many), ``worst_decile`` (their 90th
    percentile), ``collapsed_robust`` and ``runs_robust`` (the same without the fragile
    problems, where random search is within noise of the best: ``fragile`` lists those),
    ``worse_than_random`` and ``runs_vs_random`` (its runs whose final best is worse than the
    median of random search's on the same problem, a measure of collapse that needs no scale,
    and of how many runs on problems where random search was run), ``collapsed_as_best``,
    ``worse_than_random_as_best`` and ``runs_as_best`` (the same counts over its runs on the
    problems where its mean is the best of all: see :func:`collapse_floor`) and
    ``ms_per_eval``, the median of :func:`ms_per_eval` over its runs on those problems."""
    from scipy.stats import rankdata

    out: dict[str, dict] = {}
    for (problem, budget), methods in groups.items():
        stats = {label: summarize(runs) for label, runs in methods.items()}
        means = {k: v["best_mean"] for k, v in stats.items() if v["best_mean"] is not None}
        if len(means) < 2:
            continue
        labels = list(means)
        ranks = rankdata([means[k] for k in labels])
        best = min(means.values())
        rand = means.get("random")
        # fragile: random search's mean is nearer the best than the spread of its own runs, so
        # a normalised regret there measures little but noise
        fragile = rand is not None and best < rand < best + stats["random"]["best_sd"]
        rand_median = None if rand is None else float(np.median(
            [r["best"] for r in methods["random"] if r["best"] is not None]))
        for label, rank in zip(labels, ranks):
            row = out.setdefault(label, {"problems": 0, "ranks": [], "regrets": [],
                                         "worst_run": None, "ms": [], "run_regrets": [],
                                         "robust_regrets": [], "fragile": [],
                                         "worse_than_random": 0, "runs_vs_random": 0,
                                         "collapsed_as_best": 0,
                                         "worse_than_random_as_best": 0, "runs_as_best": 0})
            bests = [r["best"] for r in methods[label] if r["best"] is not None]
            worse = 0
            if rand_median is not None:
                worse = sum(b > rand_median for b in bests)
                row["runs_vs_random"] += len(bests)
                row["worse_than_random"] += worse
            row["problems"] += 1
            row["ms"] += [ms_per_eval(r) for r in methods[label]]
            row["ranks"].append(float(rank))
            if fragile:
                row["fragile"].append((problem, budget))
            if rand is not None and rand > best:
                row["regrets"].append((means[label] - best) / (rand - best))
                collapsed = 0
                for r in methods[label]:
                    if r["best"] is None:
                        continue
                    regret = float((r["best"] - best) / (rand - best))
                    row["run_regrets"].append(regret)
                    collapsed += regret >= COLLAPSE
                    if not fragile:
                        row["robust_regrets"].append(regret)
                    if row["worst_run"] is None or regret > row["worst_run"][3]:
                        row["worst_run"] = (problem, budget, r["seed"], regret)
                if means[label] == best:  # this problem's best method: the floor's runs
                    row["runs_as_best"] += len(bests)
                    row["worse_than_random_as_best"] += worse
                    row["collapsed_as_best"] += collapsed
    for row in out.values():
        row["mean_rank"] = float(np.mean(row.pop("ranks")))
        row["ms_per_eval"] = _median(row.pop("ms"))
        row["mean_regret"] = float(np.mean(row["regrets"])) if row["regrets"] else None
        row["worst_regret"] = float(np.max(row["regrets"])) if row["regrets"] else None
        runs, robust = row["run_regrets"], row.pop("robust_regrets")
        row["runs"], row["runs_robust"] = len(runs), len(robust)
        row["collapsed"] = sum(g >= COLLAPSE for g in runs)
        row["collapsed_robust"] = sum(g >= COLLAPSE for g in robust)
        row["worst_decile"] = float(np.quantile(runs, 0.9)) if runs else None
    return out


def collapse_floor(rows: dict[str, dict]) -> tuple[int, int, int]:
    """``(collapsed, worse than random search's median, runs)``: over the problems of
    :func:`suite_summary`'s ``rows`` where random search was run and did not tie the best,
    the runs of the method whose mean is the best on each (every method of equal best
    mean).  A run collapses when it ends nearer random search's mean than the best mean, so
    where random search is within a few standard deviations of the best, the best method's
    own runs collapse too: what a method would count if it were, on every problem, as good
    as that problem's best."""
    return tuple(sum(r[k] for r in rows.values()) for k in (
        "collapsed_as_best", "worse_than_random_as_best", "runs_as_best"))


def _share(k: int, n: int) -> str:
    return "—" if n == 0 else f"{k} of {n} ({100 * k / n:.0f} %)"


def _worst_run(run: tuple | None) -> str:
    if run is None:
        return "—"
    problem, budget, seed, regret = run
    return f"{problem}, {budget} evals, seed {seed}: {_fmt(regret, 3)}"


def _p(p: float | None) -> str:
    return "—" if p is None else f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def _verdict(result: dict, reference: str) -> str:
    if result["verdict"] == "no":
        return "no"
    return f"yes: {reference} {result['verdict']}"


def _paired_lines(sub: dict[tuple, dict], suite: str, split: str,
                  reference: str) -> list[str]:
    """The paired tests of one suite split (see :mod:`benchmarks.harness.paired`)."""
    from benchmarks.harness.paired import ALPHA, compare, compare_by
    from benchmarks.problems.problems import family_of

    labels = list(dict.fromkeys(label for methods in sub.values() for label in methods))
    if len(labels) < 2:
        return []
    head = [f"### Paired tests: {suite} ({split} split), {reference} against each method", ""]
    if reference not in labels:
        return head + [f"No runs of the reference method {reference!r} in the {split} split "
                       f"(choose another with --reference).", ""]
    lines = head + [
        f"Runs of the {split} split paired by problem, budget and seed; final best values "
        f"compared, each difference divided by the spread of all runs' final bests on its "
        f"problem; Wilcoxon signed-rank test, two-sided (ties dropped; p = 1 when every pair "
        f"ties).  Wins: {reference} lower.  Significant: p < {ALPHA}, and which way.", ""]
    rows = [[label, r["n"], r["wins"], r["ties"], r["losses"], _p(r["p"]),
             _verdict(r, reference)] for label, r in compare(sub, reference).items()]
    lines += [markdown_table(["method", "pairs", f"{reference} wins", "ties",
                              f"{reference} losses", "p (Wilcoxon)",
                              f"significant at {ALPHA}"], rows), ""]
    by_family = compare_by(sub, reference, family_of)
    others = [label for label in labels if label != reference]
    lines += [f"Per problem family ({split} split): {reference}'s wins/ties/losses, p, and "
              f"'better' / 'worse' where significant at {ALPHA}.", ""]
    table = []
    for family, results in by_family.items():
        cells = []
        for label in others:
            r = results.get(label)
            cells.append("—" if r is None else
                         f"{r['wins']}/{r['ties']}/{r['losses']}, p {_p(r['p'])}"
                         + ("" if r["verdict"] == "no" else f", {r['verdict']}"))
        table.append([family, *cells])
    lines += [markdown_table(["family", *others], table), ""]
    if "random" in others:
        worse = [f for f, results in by_family.items()
                 if results.get("random", {}).get("verdict") == "worse"]
        lines += [f"Families where {reference} is significantly worse than random search "
                  f"({split} split): {', '.join(worse) if worse else 'none'}.", ""]
    return lines


def _split_label(problem: str) -> str:
    from benchmarks.problems.problems import split_of

    where = split_of(problem)
    return "" if where is None else f" ({where[0]} {where[1]} split)"


def _summary_lines(groups: dict[tuple, dict[str, list[dict]]],
                   reference: str = "mondrian") -> list[str]:
    from benchmarks.problems.problems import SUITES, split_of

    by_split: dict[tuple, dict] = {}
    for key, methods in groups.items():
        where = split_of(key[0])
        if where is not None:
            by_split.setdefault(where, {})[key] = methods
    lines = []
    for (suite, split), sub in sorted(by_split.items(), key=lambda kv: (
            list(SUITES).index(kv[0][0]), kv[0][1])):
        rows = suite_summary(sub)
        if not rows:
            continue
        budgets = sorted({b for _, b in sub})
        lines += [f"## Summary: {suite} ({split} split), {len(sub)} problem"
                  f"{'s' if len(sub) != 1 else ''}", "",
                  f"Problems of the {split} split run here, budgets "
                  f"{', '.join(map(str, budgets))}.  Mean rank of each method's mean final "
                  f"best (1 = best); normalised regret 0 = best method, 1 = random search "
                  f"(mean and worst over the problems where random search was run and did "
                  f"not tie the best).  A run has collapsed when its own final best has a "
                  f"normalised regret of {COLLAPSE} or more; a scale-free count of collapse is "
                  f"that of the runs ending worse than random search's median run on the "
                  f"same problem.  Optimizer ms/eval: median over the method's runs here "
                  f"of its wall time outside the objective per evaluation.", ""]
        table = [[label, r["problems"], f"{r['mean_rank']:.2f}", _fmt(r["mean_regret"], 3),
                  _fmt(r["worst_regret"], 3), _share(r["collapsed"], r["runs"]),
                  _share(r["collapsed_robust"], r["runs_robust"]),
                  _fmt(r["worst_decile"], 3),
                  _share(r["worse_than_random"], r["runs_vs_random"]),
                  _worst_run(r["worst_run"]),
                  _fmt(r["ms_per_eval"], 3)]
                 for label, r in sorted(rows.items(), key=lambda kv: kv[1]["mean_rank"])]
        lines += [markdown_table(["method", "problems", "mean rank", "normalised regret "
                                  "(mean)", "normalised regret (worst)",
                                  f"collapsed runs (regret >= {COLLAPSE})",
                                  "collapsed runs, fragile problems left out",
                                  "run regret, 90th percentile",
                                  "runs worse than random search's median run",
                                  "worst run (its normalised regret)", "optimizer ms/eval"],
                                 table), ""]
        fragile = sorted({f"{p} ({b} evals)" for r in rows.values() for p, b in r["fragile"]})
        lines += [f"Fragile problems (random search's mean within one standard deviation of "
                  f"its runs of the best mean; their normalised regrets are mostly noise): "
                  f"{', '.join(fragile) if fragile else 'none'}.", ""]
        collapsed, worse, runs = collapse_floor(rows)
        if runs:
            lines += [f"The floor of these counts: the runs of each problem's best method (by "
                      f"mean), as if one method were as good as the best on every problem: "
                      f"{_share(collapsed, runs)} collapsed, {_share(worse, runs)} worse than "
                      f"random search's median run.", ""]
        lines += _paired_lines(sub, suite, split, reference)
    return lines


def to_markdown(records: list[dict], reference: str = "mondrian") -> str:
    """The markdown report of a list of records; ``reference`` is the method the paired tests
    compare every other method with."""
    lines = ["# Benchmark results", "",
             "Best = final best value, mean ± sd over runs.  At optimum = runs whose best "
             "reached the target (exact table minimum on the measured grids; f* + 1e-3·|f*| on "
             "continuous problems; on random grids the easier of that and the grid's minimum).  "
             "Median evals = median number of evaluations to reach the target over all runs "
             "(— when half or more never reach it).  Optimizer s/run = mean wall time outside "
             "the objective; optimizer ms/eval = the median over runs of that time per "
             "evaluation.  \"(continuous box)\": a peer that searched the continuous box of "
             "a random-grid problem.  Where f* is unknown, the best value any run here "
             "found stands for it.", ""]
    groups = _groups(records)
    lines += _summary_lines(groups, reference)
    for (problem, budget), methods in groups.items():
        methods, estimated = _with_reference(methods)
        first = next(iter(methods.values()))[0]
        targets = sorted({r["target"] for runs in methods.values() for r in runs
                          if r["target"] is not None})
        target = ("—" if not targets else _fmt(targets[0], 10) if len(targets) == 1
                  else f"{_fmt(targets[0], 10)} to {_fmt(targets[-1], 10)} (per grid)")
        optimum = (f"Optimum unknown; f* = {_fmt(first['optimum'], 10)}, the best value "
                   f"any run here found" if estimated
                   else f"Optimum f* = {_fmt(first['optimum'], 10)}")
        lines += [f"## {problem}, {budget} evaluations{_split_label(problem)}", "",
                  f"{optimum}; target {target}.", ""]
        rows = []
        for label, runs in methods.items():
            s = summarize(runs)
            rows.append([label, s["n"], f"{_fmt(s['best_mean'])} ± {_fmt(s['best_sd'], 3)}",
                         f"{s['reached']}/{s['n']}", _fmt(s["median_evals"], 4),
                         f"{s['optimizer_time_s']:.3g}", _fmt(s["ms_per_eval"], 3)])
        lines += [markdown_table(["method", "runs", "best (mean ± sd)", "at optimum",
                                  "median evals to optimum", "optimizer s/run",
                                  "optimizer ms/eval"], rows), ""]
    return "\n".join(lines)


def plot_problem(methods: dict[str, list[dict]], path: str | os.PathLike,
                 title: str | None = None) -> str:
    """Mean ± s.e. over runs of the gap ``best so far - optimum`` against the evaluation, one
    curve per method, log scale where the gap is positive; a PNG at ``path``."""
    fig, ax = figure(6.0, 4.0)
    positive = []
    for label, runs in methods.items():
        L = max(int(r["budget"]) for r in runs)
        M = np.full((len(runs), L), np.nan)
        for i, r in enumerate(runs):
            t = np.array([v if v is not None else np.nan for v in r["trace"]], dtype=float)
            t = np.maximum(t - (r["optimum"] if r["optimum"] is not None else np.nan), 0.0)
            M[i, :t.size] = t[:L]
            if 0 < t.size < L:
                M[i, t.size:] = t[-1]  # a run that ended early keeps its best
        counts = np.isfinite(M).sum(axis=0)
        with warnings.catch_warnings():  # columns before any run's first success are all nan
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.nanmean(M, axis=0)
            se = np.nanstd(M, axis=0, ddof=1) / np.sqrt(counts.clip(1))
        se = np.where(counts > 1, se, 0.0)
        x = np.arange(1, L + 1)
        shown = np.where(mean > 0, mean, np.nan)
        (line,) = ax.plot(x, shown, label=f"{label} ({len(runs)})")
        positive.append(mean[mean > 0])
        lo = np.where(mean - se > 0, mean - se, np.nan)
        ax.fill_between(x, np.where(np.isfinite(lo), lo, shown), shown + se,
                        color=line.get_color(), alpha=0.2, linewidth=0)
    if any(p.size for p in positive):
        ax.set_yscale("log")
    ax.set_xlabel("evaluation")
    ax.set_ylabel("best so far − optimum (mean ± s.e.)")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    return save(fig, path)


def report(paths: str | os.PathLike | Iterable[str | os.PathLike],
           out: str | os.PathLike = "report", plots: bool = True,
           reference: str = "mondrian") -> str:
    """Write ``out/report.md`` and ``out/<problem>.png`` from result files; return the markdown.
    ``reference`` is the method the paired tests compare every other method with (default
    ``"mondrian"``).

    ``ValueError`` when the files hold no result."""
    records = load_records(paths)
    if not records:
        raise ValueError("the results files hold no complete run (lines that are not one "
                         "were named in warnings).")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    text = to_markdown(records, reference)
    (out / "report.md").write_text(text + "\n", encoding="utf-8")
    if plots:
        groups = _groups(records)
        budgets: dict[str, int] = {}
        for problem, _ in groups:
            budgets[problem] = budgets.get(problem, 0) + 1
        for (problem, budget), methods in groups.items():
            name = problem if budgets[problem] == 1 else f"{problem}_{budget}"
            methods, estimated = _with_reference(methods)
            n = max(len(runs) for runs in methods.values())
            plot_problem(methods, out / f"{name}.png",
                         title=f"{problem}, {budget} evaluations, up to {n} runs"
                               + ("\n(f* unknown: the best value found)" if estimated else ""))
    return text


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``mfbo report`` / ``python -m benchmarks.harness.report``."""
    parser.add_argument("results", nargs="+", help="JSONL results file(s) of mfbo bench")
    parser.add_argument("--out", default="report",
                        help="directory for report.md and the <problem>.png plots "
                             "(default: report)")
    parser.add_argument("--no-plots", action="store_true", help="write only report.md")
    parser.add_argument("--reference", default="mondrian",
                        help="the method the paired Wilcoxon tests compare every other "
                             "method with (default: mondrian)")
    return parser


def run_from_args(args: argparse.Namespace) -> None:
    """:func:`report` from parsed arguments, printed (:class:`~benchmarks.harness.cli.CommandError`
    for a missing or empty results file)."""
    try:
        text = report(args.results, args.out, plots=not args.no_plots,
                      reference=args.reference)
    except (ValueError, FileNotFoundError) as err:
        raise CommandError(str(err)) from err
    print(text)
    print(f"written to {Path(args.out) / 'report.md'}")


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.harness.report``: the same as ``mfbo report``."""
    return command_main(sys.modules[__name__], argv)


if __name__ == "__main__":
    sys.exit(main())
