"""Mondrian grid lifetime exploration on data with irrelevant dimensions (Balog & Teh, 2015,
poster Fig. 5; Balog, *The Mondrian Process in Machine Learning*, Oxford report, Section 5.2,
Figs. 5.3-5.4).

Run ``python -m benchmarks.experiments.grid_exploration [--out results/grid] [--quick]
[--seeds N]``.

1. **Poster Fig. 5.**  Toy data ``x ~ U[0,1]^2``, ``y = sin(2 pi x1) + 0.1 eps`` (``x2``
   irrelevant; the report and poster do not give their toy function, so we take one smooth
   function of ``x1`` alone), the poster's 60 training / 40 validation rows, one grid
   (``M = 1``), ``delta = 0.1`` (``delta2 = 0.01``).  The greedy search starts at
   ``lambda = (0, 0)`` and at every step raises the lifetime whose next cut gives the lowest
   validation RMSE (``max_steps=60``, ``patience=20``).  For the first seed the validation
   RMSE of *every* configuration (cuts per dimension) is drawn with the greedy path on it;
   over ``--seeds`` data sets the best lifetimes found are tabulated, with the test RMSE on
   1,000 fresh points.
2. **Friedman-1** (scikit-learn's ``make_friedman1``, noise 1): 10 inputs of which 5 are
   pure noise; 1,000 training / 1,000 validation / 2,000 test rows, ``M = 5`` grids and
   ``delta2`` = noise variance / target variance (the noise-to-prior variance ratio of ridge
   regression read as Bayesian linear regression, Balog et al., 2016, Section 4.2.1, with the
   known noise).  Greedy search from 0 (``patience=15``); compared with the best *isotropic*
   grid (all lifetimes equal, the best on validation of 25 log-spaced values in [0.02, 5]
   giving at most 2,500 cells).
3. **Cost of an incremental move vs a refit** at the same configuration (Friedman-1, 2,000
   rows, ``M = 5``): one public lifetime move (``increase`` or ``decrease``: the O(K C^2)
   block update of the inverse for the K cells split or merged, the new weights and the
   look-up table) against a ``fit`` from scratch at the configuration reached, and against
   rebuilding only ``A^-1`` from the current features (sparse ``Phi'Phi`` plus the O(C^3)
   Cholesky inverse); all single-threaded BLAS, as the grid always runs.

Writes ``report.md`` (also printed), ``results.json``, ``toy_exploration.png`` and
``friedman_exploration.png`` to ``--out`` (default ``results/grid``).  ``--quick`` runs every
part at reduced sizes (CI smoke test).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Sequence

import numpy as np
from sklearn.datasets import make_friedman1
from threadpoolctl import threadpool_limits

from benchmarks.harness.environment import environment
from benchmarks.harness.figures import figure, save
from benchmarks.harness.tables import markdown_table
from benchmarks.harness.timing import median_time, timed
from surrogates import MondrianGrid, rmse

TOY_TRAIN, TOY_VAL, TOY_TEST = 60, 40, 1000
TOY_DELTA2 = 0.01  # poster Fig. 5: delta = 0.10
FRIEDMAN_RELEVANT = 5
ISO_MAX_CELLS = 2500


def toy_data(seed: int, n: int):
    """``n`` rows of the toy: ``x ~ U[0,1]^2``, ``y = sin(2 pi x1) + 0.1 eps``."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    return X, np.sin(2 * np.pi * X[:, 0]) + 0.1 * rng.standard_normal(n)


# -- part 1: the poster's toy ------------------------------------------------------------------
def toy_surface(model: MondrianGrid, Xv, yv, max_cuts: int):
    """Validation RMSE of every configuration with ``k1``, ``k2`` gap cuts (``lifetimes`` at
    the birth times of the cuts), visited in a snake order so each move is one cut."""
    times = [np.r_[0.0, model.cut_times(d)][:max_cuts + 1] for d in (0, 1)]
    surf = np.empty((times[1].shape[0], times[0].shape[0]))
    start = model.lifetimes_
    for i, l1 in enumerate(times[1]):
        cols = range(times[0].shape[0]) if i % 2 == 0 else reversed(range(times[0].shape[0]))
        for j in cols:
            model.set_lifetimes([times[0][j], l1], incremental=True)
            surf[i, j] = rmse(yv, model.predict(Xv))
    model.set_lifetimes(start)
    return surf, times


def run_toy(seeds: int, max_cuts: int):
    """Greedy exploration on ``seeds`` toy data sets; the RMSE surface of the first (up to
    ``max_cuts`` cuts per input)."""
    runs = []
    first = None
    for seed in range(seeds):
        X, y = toy_data(seed, TOY_TRAIN + TOY_VAL + TOY_TEST)
        Xtr, ytr = X[:TOY_TRAIN], y[:TOY_TRAIN]
        Xv, yv = X[TOY_TRAIN:TOY_TRAIN + TOY_VAL], y[TOY_TRAIN:TOY_TRAIN + TOY_VAL]
        Xte, yte = X[TOY_TRAIN + TOY_VAL:], y[TOY_TRAIN + TOY_VAL:]
        g = MondrianGrid(n_grids=1, lifetimes=0.0, delta2=TOY_DELTA2, random_state=seed)
        g.fit(Xtr, ytr)
        test_start = rmse(yte, g.predict(Xte))
        res = g.explore(Xv, yv, max_steps=60, patience=20)
        moves = res.moved[1:res.best_step + 1]
        run = {"seed": seed, "best_lifetimes": res.best_lifetimes.tolist(),
               "best_step": res.best_step, "val_rmse_start": float(res.val_rmse[0]),
               "val_rmse_best": float(res.val_rmse[res.best_step]),
               "test_rmse_start": test_start, "test_rmse_best": rmse(yte, g.predict(Xte)),
               "moves_to_best": [int(np.sum(moves == d)) for d in (0, 1)],
               "moves_total": [int(np.sum(res.moved[1:] == d)) for d in (0, 1)],
               "n_cells_best": int(res.n_cells[res.best_step])}
        if seed == 0:
            surf, times = toy_surface(g, Xv, yv, max_cuts)
            counts = np.array([[np.searchsorted(times[d], lam[d], side="right") - 1
                                for d in (0, 1)] for lam in res.lifetimes])
            first = {"surface": surf.tolist(), "path_cuts": counts.tolist(),
                     "val_rmse": res.val_rmse.tolist(), "train_rmse": res.train_rmse.tolist(),
                     "lifetimes": res.lifetimes.tolist(), "best_step": res.best_step}
        runs.append(run)
    return {"runs": runs, "first": first}


def toy_table(toy) -> str:
    """The toy's best lifetimes and errors over the runs, as markdown."""
    runs = toy["runs"]
    lam = np.array([r["best_lifetimes"] for r in runs])
    mv = np.array([r["moves_to_best"] for r in runs])
    n = len(runs)

    def q(v):
        a, b, c = np.percentile(v, [25, 50, 75])
        return f"{b:.2f} [{a:.2f}, {c:.2f}]"

    rows = [["best lifetime, median [quartiles]", q(lam[:, 0]), q(lam[:, 1])],
            ["best lifetime, mean", f"{lam[:, 0].mean():.2f}", f"{lam[:, 1].mean():.2f}"],
            ["runs whose best lifetime is 0", f"{np.sum(lam[:, 0] == 0)}/{n}",
             f"{np.sum(lam[:, 1] == 0)}/{n}"],
            ["greedy moves up to the best step, mean", f"{mv[:, 0].mean():.1f}",
             f"{mv[:, 1].mean():.1f}"]]
    table = markdown_table(["", "x1 (relevant)", "x2 (irrelevant)"], rows)
    err = markdown_table(
        ["", "validation RMSE", "test RMSE (1,000 points)"],
        [["start, lifetimes (0, 0)", f"{np.mean([r['val_rmse_start'] for r in runs]):.3f}",
          f"{np.mean([r['test_rmse_start'] for r in runs]):.3f}"],
         ["best configuration found", f"{np.mean([r['val_rmse_best'] for r in runs]):.3f}",
          f"{np.mean([r['test_rmse_best'] for r in runs]):.3f}"]])
    f = toy["first"]
    surf = np.array(f["surface"])
    i, j = np.unravel_index(np.argmin(surf), surf.shape)
    k1, k2 = f["path_cuts"][f["best_step"]]
    first = (f"Seed 0 (figure): the greedy search's best has {k1} cuts in x1 and {k2} in x2, "
             f"validation RMSE {f['val_rmse'][f['best_step']]:.3f}; the best of all "
             f"{surf.size} configurations on the surface has {j} and {i} cuts, RMSE "
             f"{surf[i, j]:.3f}.")
    return (table + "\n\nMean over the runs (noise standard deviation 0.1):\n\n" + err
            + "\n\n" + first)


def plot_toy(toy, path: Path, title: str) -> None:
    """Four panels: the validation RMSE surface of seed 0 with the greedy path, RMSE and
    lifetimes along the path, and the best lifetimes of every data set."""
    f = toy["first"]
    surf = np.array(f["surface"])
    path_cuts = np.array(f["path_cuts"])
    fig, ax = figure(11, 8.5, 2, 2)
    im = ax[0, 0].imshow(surf, origin="lower", aspect="auto", cmap="viridis",
                         vmax=np.percentile(surf, 95))
    fig.colorbar(im, ax=ax[0, 0], label="validation RMSE")
    inside = (path_cuts[:, 0] < surf.shape[1]) & (path_cuts[:, 1] < surf.shape[0])
    ax[0, 0].plot(path_cuts[inside, 0], path_cuts[inside, 1], "-o", color="tab:red", ms=3,
                  label="greedy path")
    b = path_cuts[f["best_step"]]
    ax[0, 0].plot(b[0], b[1], "*", color="white", ms=14, mec="k", label="best found")
    i, j = np.unravel_index(np.argmin(surf), surf.shape)
    ax[0, 0].plot(j, i, "x", color="tab:orange", ms=10, mew=2, label="best on the surface")
    ax[0, 0].set(xlabel="cuts in x1 (relevant)", ylabel="cuts in x2 (irrelevant)",
                 title="validation RMSE of every configuration (seed 0)")
    ax[0, 0].legend(loc="upper right", fontsize=8)
    steps = np.arange(len(f["val_rmse"]))
    ax[0, 1].plot(steps, f["val_rmse"], label="validation")
    ax[0, 1].plot(steps, f["train_rmse"], label="training")
    ax[0, 1].axvline(f["best_step"], color="gray", ls=":")
    ax[0, 1].set(xlabel="greedy step", ylabel="RMSE", title="RMSE along the greedy path")
    ax[0, 1].legend()
    lam = np.array(f["lifetimes"])
    ax[1, 0].step(steps, lam[:, 0], where="post", label="lambda_1 (relevant)")
    ax[1, 0].step(steps, lam[:, 1], where="post", label="lambda_2 (irrelevant)")
    ax[1, 0].set(xlabel="greedy step", ylabel="lifetime", title="lifetimes along the path")
    ax[1, 0].legend()
    best = np.array([r["best_lifetimes"] for r in toy["runs"]])
    ax[1, 1].scatter(best[:, 0], best[:, 1], s=18)
    ax[1, 1].set(xlabel="best lambda_1 (relevant)", ylabel="best lambda_2 (irrelevant)",
                 title=f"best lifetimes over {len(best)} data sets")
    fig.suptitle(title)
    save(fig, path)


# -- part 2: Friedman-1 ------------------------------------------------------------------------
def run_friedman(seeds: int, n: int, max_steps: int):
    """Greedy exploration on ``seeds`` Friedman-1 data sets of ``n`` train / ``n`` validation /
    ``2 n`` test rows, against the best isotropic lifetime."""
    runs = []
    for seed in range(seeds):
        X, y = make_friedman1(n_samples=4 * n, noise=1.0, random_state=seed)
        Xtr, ytr, Xv, yv = X[:n], y[:n], X[n:2 * n], y[n:2 * n]
        Xte, yte = X[2 * n:], y[2 * n:]
        delta2 = 1.0 / float(np.var(ytr))
        g = MondrianGrid(n_grids=5, lifetimes=0.0, delta2=delta2, random_state=seed)
        g.fit(Xtr, ytr)
        res = g.explore(Xv, yv, max_steps=max_steps, patience=15)
        test_best = rmse(yte, g.predict(Xte))
        # isotropic reference: the same grids with all lifetimes equal, the best of 25
        # log-spaced values (up to ISO_MAX_CELLS cells: the error has long risen by then)
        iso = []
        for lam in np.geomspace(0.02, 5.0, 25):
            if g._state.count_cells(np.full(X.shape[1], lam)) > ISO_MAX_CELLS:
                break
            g.set_lifetimes(lam, incremental=False)
            iso.append((rmse(yv, g.predict(Xv)), lam, rmse(yte, g.predict(Xte))))
        iso_v, iso_lam, iso_test = min(iso)
        runs.append({"seed": seed, "delta2": delta2, "best_lifetimes": res.best_lifetimes.tolist(),
                     "best_step": res.best_step, "n_steps": len(res.moved) - 1,
                     "val_rmse_start": float(res.val_rmse[0]),
                     "val_rmse_best": float(res.val_rmse[res.best_step]),
                     "test_rmse_best": test_best, "n_cells_best": int(res.n_cells[res.best_step]),
                     "seconds": float(res.seconds[-1]), "n_candidates": res.n_candidates,
                     "iso_lifetime": float(iso_lam), "iso_val_rmse": iso_v,
                     "iso_test_rmse": iso_test,
                     "path_lifetimes": res.lifetimes.tolist(), "path_val_rmse":
                         res.val_rmse.tolist()})
    return runs


def friedman_tables(runs) -> str:
    """Friedman-1's best lifetimes per input and errors against the isotropic grid."""
    lam = np.array([r["best_lifetimes"] for r in runs])
    D = lam.shape[1]
    n = len(runs)
    rows = []
    for d in range(D):
        kind = "relevant" if d < FRIEDMAN_RELEVANT else "noise"
        rows.append([f"x{d + 1} ({kind})", f"{lam[:, d].mean():.2f}",
                     f"{np.median(lam[:, d]):.2f}", f"{np.sum(lam[:, d] == 0)}/{n}"])
    t1 = markdown_table(["input", "best lifetime, mean", "median", "runs at 0"], rows)
    rel, irr = lam[:, :FRIEDMAN_RELEVANT], lam[:, FRIEDMAN_RELEVANT:]
    summary = (f"Relevant inputs: mean best lifetime {rel.mean():.2f}, at 0 in "
               f"{np.mean(rel == 0):.0%} of (run, input) pairs; noise inputs: mean "
               f"{irr.mean():.2f}, at 0 in {np.mean(irr == 0):.0%}.")

    def m(key):
        return np.mean([r[key] for r in runs])

    t2 = markdown_table(
        ["model", "validation RMSE", "test RMSE", "cells"],
        [["lifetimes 0 (start)", f"{m('val_rmse_start'):.3f}", "", "5"],
         ["greedy per-dimension lifetimes", f"{m('val_rmse_best'):.3f}",
          f"{m('test_rmse_best'):.3f}", f"{m('n_cells_best'):.0f}"],
         [f"best isotropic lifetime (mean {m('iso_lifetime'):.2f})", f"{m('iso_val_rmse'):.3f}",
          f"{m('iso_test_rmse'):.3f}", ""]])
    per_cand = 1000 * np.sum([r["seconds"] for r in runs]) / np.sum(
        [r["n_candidates"] for r in runs])
    cost = (f"Search: {m('n_steps'):.0f} greedy steps per run on average, "
            f"{m('seconds'):.1f} s per run, {per_cand:.1f} ms per candidate move "
            f"(copy of the model, incremental update, validation RMSE).")
    return "\n\n".join([t1, summary, "Mean over the runs (noise standard deviation 1):", t2,
                        cost])


def plot_friedman(runs, path: Path, title: str) -> None:
    """Lifetimes and validation RMSE along the greedy path of seed 0, and the best lifetimes
    of every input over the runs."""
    r = runs[0]
    lam = np.array(r["path_lifetimes"])
    steps = np.arange(lam.shape[0])
    fig, ax = figure(15, 4.3, 1, 3)
    for d in range(lam.shape[1]):
        rel = d < FRIEDMAN_RELEVANT
        ax[0].step(steps, lam[:, d], where="post", ls="-" if rel else "--",
                   color=f"C{d}" if rel else "gray", alpha=1 if rel else 0.7,
                   label=f"x{d + 1}" if rel else ("x6-x10 (noise)" if d == FRIEDMAN_RELEVANT
                                                  else None))
    ax[0].axvline(r["best_step"], color="k", ls=":")
    ax[0].set(xlabel="greedy step", ylabel="lifetime", title="lifetimes along the path (seed 0)")
    ax[0].legend(fontsize=8)
    ax[1].plot(steps, r["path_val_rmse"])
    ax[1].axvline(r["best_step"], color="k", ls=":")
    ax[1].set(xlabel="greedy step", ylabel="validation RMSE", title="validation RMSE (seed 0)")
    best = np.array([x["best_lifetimes"] for x in runs])
    D = best.shape[1]
    colors = ["C0" if d < FRIEDMAN_RELEVANT else "gray" for d in range(D)]
    ax[2].bar(np.arange(D), best.mean(0), yerr=best.std(0), color=colors, capsize=3)
    ax[2].set_xticks(np.arange(D), [f"x{d + 1}" for d in range(D)])
    ax[2].set(ylabel="best lifetime", title=f"best lifetimes, mean +/- sd over {len(runs)} runs")
    fig.suptitle(title)
    save(fig, path)


# -- part 3: cost ------------------------------------------------------------------------------
def run_cost(n: int, scales: Sequence[float], reps: int):
    """Cost of one lifetime move (timed once: it changes the model) against a fit from scratch
    and a rebuild of ``A^-1`` at the configuration reached (medians after a warm-up), on ``n``
    Friedman-1 rows with the relevant lifetimes at each of ``scales``."""
    X, y = make_friedman1(n_samples=n, noise=1.0, random_state=123)
    rows = []
    for c in scales:
        lam = np.r_[np.full(FRIEDMAN_RELEVANT, c), np.zeros(X.shape[1] - FRIEDMAN_RELEVANT)]
        g = MondrianGrid(n_grids=5, lifetimes=lam, delta2=0.05, max_cells=20000,
                         random_state=0).fit(X, y)
        moves, ks, fits, rebuilds = [], [], [], []
        for _ in range(reps):
            for d in range(FRIEDMAN_RELEVANT):
                for move in (g.increase, g.decrease):
                    C0 = g.n_cells_
                    ok, dt = timed(lambda: move(d))
                    if not ok:
                        continue
                    moves.append(dt)
                    ks.append(abs(g.n_cells_ - C0))
                    if move == g.increase and d < 2:  # refits at the configuration reached
                        fits.append(median_time(lambda: MondrianGrid(
                            n_grids=5, lifetimes=g.lifetimes_, delta2=0.05, max_cells=20000,
                            random_state=0).fit(X, y), repeats=1)[1])
                        with threadpool_limits(limits=1, user_api="blas"):
                            # A^-1 from the current features only
                            rebuilds.append(median_time(g._state.refactor, repeats=1)[1])
        rows.append({"lifetime": c, "n_cells": g.n_cells_, "cells_changed_median":
                     float(np.median(ks)), "move_ms_median": 1000 * float(np.median(moves)),
                     "fit_ms_median": 1000 * float(np.median(fits)),
                     "rebuild_ms_median": 1000 * float(np.median(rebuilds))})
    return rows


def cost_table(rows) -> str:
    """The cost rows as markdown."""
    return markdown_table(
        ["lifetime of x1-x5", "cells C", "cells split/merged per move (median)",
         "incremental move (ms)", "fit from scratch (ms)", "rebuild A^-1 only (ms)",
         "fit / move", "rebuild / move"],
        [[f"{r['lifetime']:g}", r["n_cells"], f"{r['cells_changed_median']:.0f}",
          f"{r['move_ms_median']:.1f}", f"{r['fit_ms_median']:.1f}",
          f"{r['rebuild_ms_median']:.1f}", f"{r['fit_ms_median'] / r['move_ms_median']:.0f}x",
          f"{r['rebuild_ms_median'] / r['move_ms_median']:.1f}x"] for r in rows])


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results") / "grid")
    parser.add_argument("--quick", action="store_true", help="reduced sizes (CI smoke test)")
    parser.add_argument("--seeds", type=int, default=None,
                        help="toy data sets (default 50; Friedman-1 uses a fifth of them)")
    args = parser.parse_args(argv)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    q = args.quick
    seeds = args.seeds or (4 if q else 50)
    f_seeds = max(1, seeds // 5) if not q else 1
    f_n = 250 if q else 1000
    env = environment(argv)
    (toy, fried, cost), elapsed = timed(lambda: (
        run_toy(seeds, max_cuts=20 if q else 59),
        run_friedman(f_seeds, f_n, 20 if q else 150),
        run_cost(400 if q else 2000, [1.0, 2.0] if q else [1.0, 1.5, 2.0, 2.5, 3.0],
                 1 if q else 3)))
    plot_toy(toy, out / "toy_exploration.png",
             f"Mondrian grid, toy y = sin(2 pi x1) + noise (x2 irrelevant): {TOY_TRAIN} train / "
             f"{TOY_VAL} validation, M = 1, delta = 0.1")
    plot_friedman(fried, out / "friedman_exploration.png",
                  f"Friedman-1 (x6-x10 are noise): {f_n} train / {f_n} validation, M = 5 grids")
    report = "\n".join([
        "# Mondrian grid lifetime exploration with irrelevant inputs", "",
        f"## Toy (poster Fig. 5): {seeds} data sets, {TOY_TRAIN} train / {TOY_VAL} validation, "
        f"M = 1, delta2 = {TOY_DELTA2}", "", toy_table(toy), "",
        f"## Friedman-1: {f_seeds} data sets, {f_n} train / {f_n} validation / {2 * f_n} test, "
        f"M = 5", "", friedman_tables(fried), "",
        f"## Incremental move vs refit (Friedman-1, {400 if q else 2000} rows, M = 5)", "",
        cost_table(cost), "", f"Total time: {elapsed:.0f} s", ""])
    print(report)
    (out / "report.md").write_text(report)
    for r in fried:  # keep the json small: the paths of the first run only
        if r["seed"] != 0:
            r.pop("path_lifetimes")
            r.pop("path_val_rmse")
    res = {"toy": toy, "friedman": fried, "cost": cost, "quick": q, "seconds": elapsed,
           "environment": env}
    (out / "results.json").write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
