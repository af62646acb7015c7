"""Branin with a small budget: Mondrian BO against RF-SMAC and random search.

``python -m benchmarks.experiments.bo_quick [--problem branin] [--budget 50] [--seeds 10]
[--out DIR]``

For each method and seed: ``mfbo.minimize`` with that surrogate and its defaults; the best
value after ``--budget`` evaluations is reported as mean ± sd over seeds.  Then one longer run
per method records the optimizer's own time per ask+tell (the objective is instant) and
reports the median over the iterations around 50 and 200 observations.  Writes
``report.md``, ``results.json`` and ``convergence.png`` to ``--out``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

import mfbo
from benchmarks.harness.environment import environment
from benchmarks.harness.tables import markdown_table
from benchmarks.harness.timing import clock, timed
from benchmarks.problems.problems import get_problem
from mfbo.results.result import plot_convergence

METHODS = ("mondrian", "rf-smac", "random")


def run_seeds(problem, method, budget, seeds, **options):
    """Best-so-far traces and final best values of ``mfbo.minimize`` with seeds 0..seeds-1."""
    traces, bests = [], []
    for seed in range(seeds):
        r = mfbo.minimize(problem, problem.space, n_calls=budget, random_state=seed,
                          surrogate=method, progress_bar=False, **options)
        traces.append(r.best_so_far())
        bests.append(r.best_value)
    return traces, bests


def time_per_step(problem, method, n_max, seed=0):
    """Seconds spent in ask+tell at each number of observations 0..n_max-1."""
    opt = mfbo.Optimizer(problem.space, surrogate=method, random_state=seed)
    out = np.empty(n_max)
    for i in range(n_max):
        t0 = clock()
        trial = opt.ask()
        t1 = clock()
        value = problem(**trial.params)
        t2 = clock()
        opt.tell(trial, value)
        out[i] = (t1 - t0) + (clock() - t2)
    return out


def main(argv=None):
    """Command-line entry point; returns the results per method."""
    ap = argparse.ArgumentParser(prog=f"python -m {__spec__.name}",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--problem", default="branin")
    ap.add_argument("--budget", type=int, default=50)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--timing-n", type=int, default=200,
                    help="observations of the timing run (0 = skip)")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--out", default="results/bo_quick")
    ap.add_argument("--n-initial", type=int, default=None,
                    help="initial design size (default: the surrogate's, capped at budget/4)")
    ap.add_argument("--surrogate-options", type=json.loads, default=None,
                    help='JSON dict passed as surrogate_options, e.g. \'{"y_transform": null}\'')
    ap.add_argument("--optimizer-options", type=json.loads, default=None,
                    help='JSON dict of further mfbo.minimize arguments, e.g. '
                         '\'{"n_random_candidates": 10000, "local_search": {"patience": 10, '
                         '"min_improvement": 0}}\'')
    args = ap.parse_args(argv)
    options = dict(args.optimizer_options or {})
    if args.n_initial is not None:
        options["n_initial"] = args.n_initial
    if args.surrogate_options:
        options["surrogate_options"] = args.surrogate_options
    problem = get_problem(args.problem)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results, traces = {}, {}
    for m in methods:
        (tr, bests), wall = timed(lambda: run_seeds(problem, m, args.budget, args.seeds,
                                                    **options))
        results[m] = {"best_mean": float(np.mean(bests)), "best_sd": float(np.std(bests)),
                      "bests": [float(b) for b in bests], "wall_s_per_run": wall / args.seeds}
        traces[m] = tr
        print(f"{m:10s} best after {args.budget}: {np.mean(bests):.4f} ± {np.std(bests):.4f} "
              f"({wall / args.seeds:.2f} s per run)", flush=True)
    if args.timing_n:
        for m in methods:
            if m == "random":
                continue
            steps = time_per_step(problem, m, args.timing_n)
            at = {}
            for n in (50, 200):
                if n <= args.timing_n:
                    window = steps[max(0, n - 10):n]
                    at[n] = float(np.median(window))
            results[m]["ask_tell_median_s"] = at
            print(f"{m:10s} median ask+tell: " + ", ".join(
                f"n={n}: {v * 1e3:.1f} ms" for n, v in at.items()), flush=True)
    plot_convergence(traces, out / "convergence.png", optimum=problem.optimum, log_gap=True,
                     title=f"{problem.name}, {args.seeds} seeds (mean ± s.e.)")
    rows = []
    for m, r in results.items():
        at = r.get("ask_tell_median_s", {})
        rows.append([m, f"{r['best_mean']:.4f} ± {r['best_sd']:.4f}", f"{r['wall_s_per_run']:.2f}",
                     *(f"{at[n] * 1e3:.1f} ms" if n in at else "" for n in (50, 200))])
    lines = [f"# {problem.name}, {args.budget} evaluations, {args.seeds} seeds", "",
             markdown_table(["method", "best (mean ± sd)", "s per run",
                             "median ask+tell at n=50", "at n=200"], rows)]
    (out / "report.md").write_text("\n".join(lines) + "\n")
    (out / "results.json").write_text(json.dumps(
        {"problem": problem.name, "budget": args.budget, "seeds": args.seeds,
         "results": results, "environment": environment(argv)}, indent=1))
    print("\n".join(lines))
    return results


if __name__ == "__main__":
    main()
