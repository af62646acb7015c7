"""mfbo inside Optuna and scikit-learn: the integrations against mfbo's own loop and a peer.

``python -m benchmarks.experiments.integrations [--only PARTS] [--seeds N] [--trials N]
[--overhead-trials N] [--n-iter N] [--quick] [--out DIR]`` (default ``--out
results/integrations``).  Three parts, all by default, some with ``--only`` (comma-separated):

* ``sampler-quality``: Branin, ``--trials`` (default 50) evaluations, seeds 0 to ``--seeds`` - 1
  (default 10): :func:`mfbo.minimize` against :class:`mfbo.integrations.optuna.MondrianSampler`
  driving ``optuna.create_study().optimize``, both with their defaults and the same seed.  Mean,
  median and worst best value over the seeds (optimum 0.397887) and seconds per run.
* ``sampler-overhead``: the cost per trial of the sampler's bookkeeping.  One
  :class:`mfbo.Optimizer` ask+tell loop and one in-memory Optuna study with
  ``MondrianSampler`` (``study.ask``, two ``suggest_float``, ``study.tell``) on Branin, seed 0,
  ``--overhead-trials`` (default 1,000) trials each, alternating one trial of each in the same
  process so both see the same machine load.  Each trial's time includes the (instant)
  objective.  Median over the last tenth of the trials (900 to 1,000 by default) and the ratio
  sampler / Optimizer.
* ``search-cv``: :class:`mfbo.MondrianSearchCV` against scikit-learn's ``RandomizedSearchCV`` at
  the same ``--n-iter`` (default 30): ``SVC`` on the digits data, ``C`` log-uniform in
  [1e-3, 1e3], ``gamma`` log-uniform in [1e-5, 1], 3-fold CV, ``random_state`` 0 to ``--seeds``
  - 1 (default 5); a fixed stratified 25 % held-out split (``random_state=0``) scores the refit
  best model.  Mean and worst best CV score and held-out accuracy, seconds per search.

``--seeds`` applies to both parts that repeat over seeds.  ``--quick`` is a smoke run (2 seeds,
60 trials in both sampler parts, ``n_iter`` 4 on the first 450 digits rows; explicit options
still apply).  Writes ``report.md`` (markdown tables, also printed), ``results.json`` (every
per-seed value and the environment record of :mod:`benchmarks.harness.environment`, whose load
averages are taken before the run; ``load_after`` holds those after) and, when the source tree has
uncommitted changes, ``working_tree.diff``.  The two sampler parts need Optuna (``pip install
"mfbo[optuna]"``); without it they stop with a message and exit code 2.  Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

import mfbo
from benchmarks.harness.cli import CommandError, command_main
from benchmarks.harness.environment import environment, save_diff
from benchmarks.harness.progress import progress
from benchmarks.harness.tables import markdown_table
from benchmarks.harness.timing import clock, timed

DESCRIPTION = __doc__

PARTS = ("sampler-quality", "sampler-overhead", "search-cv")
#: parts that run Optuna
NEEDS_OPTUNA = ("sampler-quality", "sampler-overhead")

BRANIN_SPACE = {"x1": (-5.0, 10.0), "x2": (0.0, 15.0)}
BRANIN_OPTIMUM = 0.397887
QUALITY_METHODS = ("mfbo.minimize", "MondrianSampler")
SEARCH_METHODS = ("MondrianSearchCV", "RandomizedSearchCV")

#: defaults of the full run and of ``--quick``
DEFAULTS = {"quality_seeds": 10, "trials": 50, "overhead_trials": 1000, "cv_seeds": 5,
            "n_iter": 30, "cv_rows": None}
QUICK = {"quality_seeds": 2, "trials": 60, "overhead_trials": 60, "cv_seeds": 2,
         "n_iter": 4, "cv_rows": 450}


def branin(x1: float, x2: float) -> float:
    """Branin on scalars (minimum 0.397887 at three points of [-5, 10] x [0, 15])."""
    return ((x2 - 5.1 / (4 * math.pi ** 2) * x1 ** 2 + 5 / math.pi * x1 - 6) ** 2
            + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10)


def _progress(message: str) -> None:
    progress("integrations", message)


def _quiet_optuna():
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _branin_trial(trial) -> float:
    return branin(trial.suggest_float("x1", -5.0, 10.0), trial.suggest_float("x2", 0.0, 15.0))


# -- part 1: sampler quality -------------------------------------------------------------------
def _optimized_study(optuna, sampler, trials: int):
    study = optuna.create_study(sampler=sampler)
    study.optimize(_branin_trial, n_trials=trials)
    return study


def sampler_quality(seeds: int, trials: int) -> dict:
    """Best Branin value after ``trials`` evaluations of ``mfbo.minimize`` and of
    ``MondrianSampler`` in Optuna, each seed 0..seeds-1, defaults of both."""
    optuna = _quiet_optuna()
    from mfbo.integrations.optuna import MondrianSampler

    best = {m: [] for m in QUALITY_METHODS}
    secs = {m: [] for m in QUALITY_METHODS}
    for seed in range(seeds):
        r, s = timed(lambda: mfbo.minimize(branin, BRANIN_SPACE, n_calls=trials,
                                           random_state=seed, progress_bar=False))
        best["mfbo.minimize"].append(float(r.best_value))
        secs["mfbo.minimize"].append(s)
        study, s = timed(lambda: _optimized_study(optuna, MondrianSampler(seed=seed), trials))
        best["MondrianSampler"].append(float(study.best_value))
        secs["MondrianSampler"].append(s)
        _progress(f"sampler-quality seed {seed}: minimize {best['mfbo.minimize'][-1]:.6f}  "
                  f"sampler {best['MondrianSampler'][-1]:.6f}")
    methods = {m: {"mean": float(np.mean(v)), "median": float(np.median(v)),
                   "worst": float(np.max(v)), "seconds_per_run": float(np.mean(secs[m])),
                   "per_seed": v, "seconds": secs[m]} for m, v in best.items()}
    return {"problem": "branin", "optimum": BRANIN_OPTIMUM, "trials": trials, "seeds": seeds,
            "methods": methods}


def quality_table(res: dict) -> str:
    names = {"mfbo.minimize": "mfbo.minimize (defaults)",
             "MondrianSampler": "MondrianSampler in optuna.create_study (defaults)"}
    rows = [[names[m], f"{r['mean']:.6f}", f"{r['median']:.6f}", f"{r['worst']:.6f}",
             f"{r['seconds_per_run']:.2f}"] for m, r in res["methods"].items()]
    return markdown_table(["method", "mean best", "median best", "worst best", "s per run"],
                          rows)


# -- part 2: sampler overhead ------------------------------------------------------------------
def overhead_window(trials: int) -> tuple[int, int]:
    """The trials whose median is reported: the last tenth (at least one)."""
    return trials - max(1, trials // 10), trials


def sampler_overhead(trials: int, seed: int = 0) -> dict:
    """Seconds per trial (ask + objective + tell) of an ``mfbo.Optimizer`` loop and of
    ``MondrianSampler`` in an in-memory Optuna study, one trial of each in turn."""
    optuna = _quiet_optuna()
    from mfbo.integrations.optuna import MondrianSampler

    opt = mfbo.Optimizer(BRANIN_SPACE, random_state=seed)
    study = optuna.create_study(sampler=MondrianSampler(seed=seed))
    t_opt, t_sampler = [], []
    for i in range(trials):
        t0 = clock()
        trial = opt.ask()
        opt.tell(trial, branin(**trial.params))
        t1 = clock()
        ot = study.ask()
        x1 = ot.suggest_float("x1", -5.0, 10.0)
        x2 = ot.suggest_float("x2", 0.0, 15.0)
        study.tell(ot, branin(x1, x2))
        t2 = clock()
        t_opt.append(t1 - t0)
        t_sampler.append(t2 - t1)
        if (i + 1) % 100 == 0 or i + 1 == trials:
            _progress(f"sampler-overhead: {i + 1}/{trials} trials")
    lo, hi = overhead_window(trials)
    m_opt = float(np.median(t_opt[lo:hi]))
    m_sampler = float(np.median(t_sampler[lo:hi]))
    return {"problem": "branin", "trials": trials, "seed": seed, "window": [lo, hi],
            "median_s_optimizer": m_opt, "median_s_sampler": m_sampler,
            "ratio_sampler_over_optimizer": m_sampler / m_opt,
            "total_s_optimizer": float(sum(t_opt)), "total_s_sampler": float(sum(t_sampler)),
            "best_optimizer": float(opt.best_trial.value),
            "best_sampler": float(study.best_value)}


def overhead_table(res: dict) -> str:
    lo, hi = res["window"]
    rows = [["mfbo.Optimizer ask + tell", f"{res['median_s_optimizer'] * 1e3:.3f}", "1.000",
             f"{res['total_s_optimizer']:.2f}", f"{res['best_optimizer']:.6f}"],
            ["MondrianSampler: study.ask, 2 suggest_float, study.tell",
             f"{res['median_s_sampler'] * 1e3:.3f}",
             f"{res['ratio_sampler_over_optimizer']:.3f}", f"{res['total_s_sampler']:.2f}",
             f"{res['best_sampler']:.6f}"]]
    return markdown_table(["loop", f"median ms per trial, trials {lo}-{hi}",
                           "ratio to Optimizer", "total s", "best value"], rows)


# -- part 3: search CV -------------------------------------------------------------------------
def search_cv(seeds: int, n_iter: int, rows: int | None = None) -> dict:
    """``MondrianSearchCV`` and ``RandomizedSearchCV`` tuning an SVC on digits (its first
    ``rows`` rows, default all), ``random_state`` 0..seeds-1."""
    from scipy.stats import loguniform
    from sklearn.datasets import load_digits
    from sklearn.model_selection import RandomizedSearchCV, train_test_split
    from sklearn.svm import SVC

    X, y = load_digits(return_X_y=True)
    if rows is not None:
        X, y = X[:rows], y[:rows]
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    make = {
        "MondrianSearchCV": lambda s: mfbo.MondrianSearchCV(
            SVC(), {"C": mfbo.Real(1e-3, 1e3, log=True), "gamma": mfbo.Real(1e-5, 1e0, log=True)},
            n_iter=n_iter, cv=3, random_state=s),
        "RandomizedSearchCV": lambda s: RandomizedSearchCV(
            SVC(), {"C": loguniform(1e-3, 1e3), "gamma": loguniform(1e-5, 1e0)},
            n_iter=n_iter, cv=3, random_state=s),
    }
    runs = {m: {"cv": [], "held_out": [], "seconds": [], "best_params": []} for m in make}
    for seed in range(seeds):
        for name in SEARCH_METHODS:
            search, s = timed(lambda: make[name](seed).fit(X_tr, y_tr))
            r = runs[name]
            r["seconds"].append(s)
            r["cv"].append(float(search.best_score_))
            r["held_out"].append(float(search.score(X_te, y_te)))
            r["best_params"].append({k: float(v) for k, v in search.best_params_.items()})
            _progress(f"search-cv seed {seed} {name}: cv {r['cv'][-1]:.4f} held-out "
                      f"{r['held_out'][-1]:.4f} ({s:.1f} s) {r['best_params'][-1]}")
    methods = {m: {"mean_best_cv": float(np.mean(r["cv"])), "worst_best_cv": float(np.min(r["cv"])),
                   "mean_held_out": float(np.mean(r["held_out"])),
                   "worst_held_out": float(np.min(r["held_out"])),
                   "seconds_per_search": float(np.mean(r["seconds"])), **r}
               for m, r in runs.items()}
    return {"data": "digits", "rows": int(X.shape[0]), "n_train": int(X_tr.shape[0]),
            "n_held_out": int(X_te.shape[0]), "n_iter": n_iter, "cv": 3, "seeds": seeds,
            "methods": methods}


def search_table(res: dict) -> str:
    rows = [[m, f"{r['mean_best_cv']:.4f}", f"{r['worst_best_cv']:.4f}",
             f"{r['mean_held_out']:.4f}", f"{r['worst_held_out']:.4f}",
             f"{r['seconds_per_search']:.1f}"] for m, r in res["methods"].items()]
    return markdown_table(["method", "mean best CV", "worst best CV", "mean held-out",
                           "worst held-out", "s per search"], rows)


# -- report and driver -------------------------------------------------------------------------
def to_markdown(results: dict) -> str:
    """The report: one section and table per part run."""
    lines = ["# Integrations: MondrianSampler in Optuna, MondrianSearchCV in scikit-learn"
             + (" (--quick smoke run)" if results["quick"] else ""), ""]
    if "sampler-quality" in results:
        q = results["sampler-quality"]
        lines += [f"## Sampler quality: Branin, {q['trials']} evaluations, seeds 0-"
                  f"{q['seeds'] - 1} (optimum {BRANIN_OPTIMUM})", "", quality_table(q), ""]
    if "sampler-overhead" in results:
        o = results["sampler-overhead"]
        lines += [f"## Sampler overhead: Branin, {o['trials']} trials of each loop, alternating "
                  f"in one process, seed {o['seed']}", "", overhead_table(o), ""]
    if "search-cv" in results:
        c = results["search-cv"]
        lines += [f"## Search CV: SVC on digits ({c['n_train']} train / {c['n_held_out']} "
                  f"held-out rows), n_iter {c['n_iter']}, cv {c['cv']}, random_state 0-"
                  f"{c['seeds'] - 1}", "", search_table(c), ""]
    env = results["environment"]
    lines += [f"Load average (1, 5, 15 min) before {env['load_average']}, after "
              f"{env['load_after']}; numba threads {env['numba_threads']}, "
              f"{env['cpu_count']} CPUs.", ""]
    return "\n".join(lines)


def settings(parts: Sequence[str] = PARTS, seeds: int | None = None,
             trials: int | None = None, overhead_trials: int | None = None,
             n_iter: int | None = None, quick: bool = False) -> dict:
    """The checked settings of a run.  ``None`` takes :data:`DEFAULTS` (or :data:`QUICK` with
    ``quick``); ``seeds`` is used by both sampler-quality and search-cv.  ``ValueError`` for an
    unknown part or a size below 1, ``ImportError`` for a sampler part without Optuna."""
    unknown = sorted(set(parts) - set(PARTS))
    if unknown or not parts:
        what = f"unknown part(s) {', '.join(unknown)}" if unknown else "no part given"
        raise ValueError(f"{what}; parts are {', '.join(PARTS)}.")
    base = QUICK if quick else DEFAULTS
    out = {"parts": [p for p in PARTS if p in parts], "quick": quick,
           "quality_seeds": base["quality_seeds"] if seeds is None else seeds,
           "cv_seeds": base["cv_seeds"] if seeds is None else seeds,
           "trials": base["trials"] if trials is None else trials,
           "overhead_trials": base["overhead_trials"] if overhead_trials is None
           else overhead_trials,
           "n_iter": base["n_iter"] if n_iter is None else n_iter, "cv_rows": base["cv_rows"]}
    for name in ("quality_seeds", "trials", "overhead_trials", "n_iter"):
        if out[name] < 1:
            flag = "seeds" if name == "quality_seeds" else name
            raise ValueError(f"{flag} must be at least 1, got {out[name]}.")
    need = [p for p in out["parts"] if p in NEEDS_OPTUNA]
    if need and importlib.util.find_spec("optuna") is None:
        raise ImportError(f"{' and '.join(need)} need Optuna: pip install \"mfbo[optuna]\" "
                          f"(or pip install optuna), or run --only search-cv.")
    return out


def run(out: str | os.PathLike = "results/integrations", parts: Sequence[str] = PARTS,
        seeds: int | None = None, trials: int | None = None,
        overhead_trials: int | None = None, n_iter: int | None = None,
        quick: bool = False, argv=None) -> dict:
    """Run the ``parts`` with the sizes of :func:`settings` and write ``results.json`` and
    ``report.md`` into ``out``; the results."""
    cfg = settings(parts, seeds, trials, overhead_trials, n_iter, quick)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = {"environment": environment(argv, packages=("optuna",)), "quick": quick,
               "parts": cfg["parts"]}
    save_diff(results["environment"], out)  # uncommitted changes: keep what was measured
    if "sampler-quality" in cfg["parts"]:
        results["sampler-quality"] = sampler_quality(cfg["quality_seeds"], cfg["trials"])
    if "sampler-overhead" in cfg["parts"]:
        results["sampler-overhead"] = sampler_overhead(cfg["overhead_trials"])
    if "search-cv" in cfg["parts"]:
        results["search-cv"] = search_cv(cfg["cv_seeds"], cfg["n_iter"], cfg["cv_rows"])
    results["environment"]["load_after"] = [round(x, 2) for x in os.getloadavg()]
    text = to_markdown(results)
    (out / "report.md").write_text(text, encoding="utf-8")
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(text)
    return results


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``python -m benchmarks.experiments.integrations``."""
    d, q = DEFAULTS, QUICK
    parser.add_argument("--out", default="results/integrations",
                        help="output directory (default: results/integrations)")
    parser.add_argument("--only", default=",".join(PARTS),
                        help=f"comma-separated parts (default: all): {', '.join(PARTS)}")
    parser.add_argument("--seeds", type=int, default=None,
                        help=f"seeds 0..N-1 of sampler-quality and search-cv (default: "
                             f"{d['quality_seeds']} and {d['cv_seeds']}; --quick: "
                             f"{q['quality_seeds']})")
    parser.add_argument("--trials", type=int, default=None,
                        help=f"evaluations per sampler-quality run (default: {d['trials']}; "
                             f"--quick: {q['trials']})")
    parser.add_argument("--overhead-trials", type=int, default=None,
                        help=f"trials of each sampler-overhead loop, median over the last "
                             f"tenth (default: {d['overhead_trials']}; --quick: "
                             f"{q['overhead_trials']})")
    parser.add_argument("--n-iter", type=int, default=None,
                        help=f"candidates per search-cv search (default: {d['n_iter']}; "
                             f"--quick: {q['n_iter']})")
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke run: the sizes above, search-cv on the first "
                             f"{q['cv_rows']} digits rows")
    return parser


def run_from_args(args: argparse.Namespace) -> None:
    """:func:`run` from parsed arguments (:class:`~benchmarks.harness.cli.CommandError` for a bad
    part or size, or a sampler part without Optuna)."""
    options = dict(parts=[p.strip() for p in args.only.split(",") if p.strip()],
                   seeds=args.seeds, trials=args.trials, overhead_trials=args.overhead_trials,
                   n_iter=args.n_iter, quick=args.quick)
    try:
        settings(**options)  # user errors here; an error while measuring keeps its traceback
    except (ValueError, ImportError) as err:
        raise CommandError(str(err)) from err
    run(args.out, argv=sys.argv, **options)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; the exit code."""
    return command_main(sys.modules[__name__], argv)


if __name__ == "__main__":
    sys.exit(main())
