"""BART samplers: particle Gibbs against the Chipman-George-McCulloch and grow/prune samplers
(Lakshminarayanan, Roy & Teh 2015; Lakshminarayanan 2016, section 4.4), and BART peers.

Run ``python -m benchmarks.experiments.bart [--out DIR] [--quick]``.  In one run it prints (as
markdown, also written to ``DIR/report.md``; all numbers go to ``DIR/results.json``):

a) Hypercube-D (D = 2, 3, 4, 5, 7; the thesis' recipe: 10 points around every vertex of
   ``[-1, 1]^D`` with offsets ``N(0, 0.1^2)``, a vertex value ``N(0, 3^2)``, noise ``N(0,
   0.01^2)``; one tree, ``alpha_s = 0.95``, ``beta_s`` 1.0, 0.5, 0.4, 0.3, 0.25; 2,000 sweeps,
   the first 1,000 burn-in): effective sample size of the log-likelihood trace and ESS per
   CPU second of those 1,000 sweeps for each sampler (Tables 4.1-4.2), trace plots of the
   log-likelihood, number of leaves and train/test MSE (Figures 4.2-4.4,
   ``DIR/hypercube_D.png``).
b) California housing (``cal_housing.data``; three disjoint training sets of 2,000 rows and one
   test set of 5,000, drawn with a fixed seed; default BART, 200 trees): test MSE, ESS and
   ESS/s (Tables 4.4-4.5), and test RMSE, 90 % interval coverage and seconds per posterior
   sample.
c) Peers in the same run, where installed: stochtree's ``BARTModel`` (its defaults: 5
   grow-from-root warm-start sweeps, then MCMC) and pymc-bart's ``PGBART`` step.  pymc-bart
   needs a numba older than this project's (its pytensor pins it), so it runs in its own
   interpreter named by the environment variable ``BART_PYMC_PYTHON`` (e.g. a virtual
   environment made with ``pip install pymc-bart``); a peer that is not available is skipped
   with a message.

ESS is R-CODA's ``effectiveSize`` (Plummer et al. 2006), as in the thesis: ``n var(x) /
S(0)`` with ``S(0)`` the spectral density at frequency 0 of an autoregressive model fitted by
Yule-Walker, its order chosen by AIC.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from scipy.linalg import solve_toeplitz

from benchmarks.harness.environment import environment
from benchmarks.harness.figures import figure, save
from benchmarks.harness.tables import markdown_table
from surrogates import BARTRegressor
from surrogates.bayes_trees.bart import mixture_interval

SAMPLERS = ("cgm", "growprune", "pg")
NAMES = {"cgm": "CGM", "growprune": "GrowPrune", "pg": "PG"}
#: beta_s per dimension, chosen in the thesis so that the prior's expected number of leaves
#: is roughly 2^D (section 4.4.1, footnote 6)
HYPERCUBE_BETA = {2: 1.0, 3: 0.5, 4: 0.4, 5: 0.3, 7: 0.25}
#: thesis Tables 4.1 and 4.2 (ESS and ESS/s of CGM, GrowPrune, PG)
THESIS_ESS = {2: (751.66, 473.57, 259.11), 3: (762.96, 285.2, 666.71),
              4: (14.01, 11.76, 686.79), 5: (2.92, 1.35, 667.27), 7: (1.16, 1.78, 422.96)}
THESIS_ESS_S = {2: (157.67, 114.81, 7.69), 3: (93.01, 26.94, 11.025),
                4: (0.961, 0.569, 5.394), 5: (0.130, 0.071, 1.673), 7: (0.027, 0.039, 0.273)}
#: thesis Tables 4.4 and 4.5, CaliforniaHouses (ESS/s in units of 1e-3)
THESIS_CAL = {"ess": (18.956, 34.849, 76.819), "ess_s_1e3": (1.967, 48.799, 16.743)}
COVERAGE = 0.9


# -- effective sample size ---------------------------------------------------------------------
def effective_sample_size(x: np.ndarray) -> float:
    """R-CODA's ``effectiveSize``: ``n var(x) / spectrum0.ar(x)``."""
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    xc = x - x.mean()
    gamma0 = float(xc @ xc) / n
    if gamma0 <= 0:
        return 0.0
    order_max = int(min(n - 1, np.floor(10 * np.log10(n))))
    acov = np.array([float(xc[:n - k] @ xc[k:]) / n for k in range(order_max + 1)])
    best = (n * np.log(gamma0), 0, np.zeros(0), gamma0)
    for p in range(1, order_max + 1):
        phi = solve_toeplitz(acov[:p], acov[1:p + 1])
        var_pred = acov[0] - float(phi @ acov[1:p + 1])
        if var_pred <= 0:
            break
        aic = n * np.log(var_pred) + 2 * p
        if aic < best[0]:
            best = (aic, p, phi, var_pred)
    _, p, phi, var_pred = best
    # R's ar() rescales the innovation variance by n / (n - (order + 1))
    var_pred *= n / (n - (p + 1))
    spec0 = var_pred / (1.0 - phi.sum()) ** 2
    return float(n * np.var(x, ddof=1) / spec0)


# -- data --------------------------------------------------------------------------------------
def hypercube(D: int, seed: int, per_vertex: int = 10):
    """Training and test sets of hypercube-D (the same vertex values, fresh offsets)."""
    rng = np.random.default_rng(seed)
    vertices = np.array(np.meshgrid(*[[-1.0, 1.0]] * D)).reshape(D, -1).T
    f = rng.normal(0.0, 3.0, vertices.shape[0])

    def draw():
        v = np.repeat(vertices, per_vertex, axis=0)
        fx = np.repeat(f, per_vertex)
        X = v + rng.normal(0.0, 0.1, v.shape)
        return X, fx + rng.normal(0.0, 0.01, fx.shape[0]), fx

    X, y, _ = draw()
    Xt, yt, _ = draw()
    return X, y, Xt, yt


def california(quick: bool, seed: int = 0):
    """Three disjoint training sets and one test set of California housing."""
    from benchmarks.problems.data import load_cal_housing

    X, y = load_cal_housing()
    order = np.random.default_rng(seed).permutation(y.shape[0])
    n_test, n_train, n_sets = (1000, 500, 1) if quick else (5000, 2000, 3)
    test = order[:n_test]
    trains = [order[n_test + i * n_train:n_test + (i + 1) * n_train] for i in range(n_sets)]
    return X, y, trains, test


# -- runs --------------------------------------------------------------------------------------
def run_ours(sampler: str, X, y, Xt, yt, n_trees: int, n_iter: int, n_burn: int, seed: int,
             **prior) -> dict[str, Any]:
    """Fit keeping every sweep (so that test MSE has a trace); ESS over sweeps after burn-in."""
    model = BARTRegressor(n_trees=n_trees, sampler=sampler, n_burn=0, n_samples=n_iter,
                          random_state=seed, **prior)
    model.fit(X, y)
    f_test = model.predict_samples(Xt)
    f_train = model.predict_samples(X)
    ll = model.loglik_trace_
    ess = effective_sample_size(ll[n_burn:])
    seconds = model.sweep_cpu_seconds_ * (n_iter - n_burn)
    kept = f_test[n_burn:]
    mean = kept.mean(axis=0)
    lo, hi = mixture_interval(kept, np.sqrt(model.sigma2_samples_[n_burn:]), COVERAGE)
    return {"ess": ess, "ess_per_s": ess / seconds, "s_per_sample": model.sweep_cpu_seconds_,
            "wall_s_per_sample": model.sweep_seconds_,
            "test_mse": float(np.mean((mean - yt) ** 2)),
            "test_rmse": float(np.sqrt(np.mean((mean - yt) ** 2))),
            "coverage": float(np.mean((yt >= lo) & (yt <= hi))),
            "mean_leaves": float(model.n_leaves_trace_[n_burn:].mean()),
            "trace": {"loglik": ll.tolist(), "leaves": model.n_leaves_trace_.tolist(),
                      "train_mse": ((f_train - y) ** 2).mean(axis=1).tolist(),
                      "test_mse": ((f_test - yt) ** 2).mean(axis=1).tolist()}}


def run_stochtree(X, y, Xt, yt, n_trees: int, n_mcmc: int, seed: int, **prior):
    try:
        from stochtree import BARTModel
    except ImportError:
        return None
    model = BARTModel()
    t0 = time.process_time()
    model.sample(X_train=X, y_train=y, X_test=Xt, num_gfr=5, num_burnin=0, num_mcmc=n_mcmc,
                 general_params={"random_seed": seed, "num_threads": 1},
                 mean_forest_params={"num_trees": n_trees, **prior})
    seconds = time.process_time() - t0
    f = np.asarray(model.y_hat_test).T  # (draws, points)
    sigma = np.sqrt(np.asarray(model.global_var_samples))
    mean = f.mean(axis=0)
    lo, hi = mixture_interval(f, sigma, COVERAGE)
    return {"test_rmse": float(np.sqrt(np.mean((mean - yt) ** 2))),
            "test_mse": float(np.mean((mean - yt) ** 2)),
            "coverage": float(np.mean((yt >= lo) & (yt <= hi))),
            "s_per_sample": seconds / (n_mcmc + 5)}


_PYMC_SCRIPT = r"""
import sys, time, numpy as np, pymc as pm, pymc_bart as pmb
d = np.load(sys.argv[1]); out = sys.argv[2]
X, y, Xt = d["X"], d["y"], d["Xt"]
m, C, draws, tune, seed = (int(v) for v in d["settings"][:5])
batch = float(d["settings"][5])
with pm.Model() as model:
    Xd = pm.Data("X", X)
    mu = pmb.BART("mu", Xd, y, m=m)
    sigma = pm.HalfNormal("sigma", float(np.std(y)))
    pm.Normal("obs", mu, sigma, observed=y, shape=mu.shape)
    step = [pmb.PGBART([mu], num_particles=C, batch=(batch, batch))]
    t0 = time.process_time()
    idata = pm.sample(draws=draws, tune=tune, chains=1, cores=1, random_seed=seed, step=step,
                      progressbar=False, compute_convergence_checks=False)
    seconds = time.process_time() - t0
    pm.set_data({"X": Xt})
    pp = pm.sample_posterior_predictive(idata, var_names=["mu"], random_seed=seed,
                                        progressbar=False)
f = pp.posterior_predictive["mu"].values.reshape(-1, Xt.shape[0])
s = idata.posterior["sigma"].values.reshape(-1)
np.savez(out, f=f, sigma=s, seconds=seconds)
"""


def pymc_python() -> str | None:
    exe = os.environ.get("BART_PYMC_PYTHON")
    if not exe or not Path(exe).exists():
        return None
    ok = subprocess.run([exe, "-c", "import pymc_bart"], capture_output=True)
    return exe if ok.returncode == 0 else None


def run_pymc_bart(X, y, Xt, yt, n_trees: int, n_particles: int, draws: int, tune: int,
                  seed: int, batch: float = 0.1):
    """pymc-bart's PGBART step; ``batch``: the fraction of the trees it redraws per posterior
    sample (its default 0.1; 1.0 redraws all of them, as our sweeps do)."""
    exe = pymc_python()
    if exe is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.npz"
        out = Path(tmp) / "out.npz"
        np.savez(data, X=X, y=y, Xt=Xt, settings=np.array([n_trees, n_particles, draws, tune,
                                                            seed, batch]))
        r = subprocess.run([exe, "-c", _PYMC_SCRIPT, str(data), str(out)], capture_output=True,
                           text=True, env={**os.environ, "PYTHONPATH": ""})
        if r.returncode != 0:
            print(f"pymc-bart failed: {r.stderr[-800:]}", file=sys.stderr)
            return None
        res = np.load(out)
        f, sigma, seconds = res["f"], res["sigma"], float(res["seconds"])
    mean = f.mean(axis=0)
    lo, hi = mixture_interval(f, sigma, COVERAGE)
    return {"test_rmse": float(np.sqrt(np.mean((mean - yt) ** 2))),
            "test_mse": float(np.mean((mean - yt) ** 2)),
            "coverage": float(np.mean((yt >= lo) & (yt <= hi))),
            "s_per_sample": seconds / (draws + tune)}


# -- report ------------------------------------------------------------------------------------
def _fmt(x, digits=3):
    if x is None:
        return "-"
    return f"{x:.{digits}g}" if abs(x) < 1e4 else f"{x:.3e}"


def trace_figure(D: int, runs: dict, n_burn: int, path: Path) -> str:
    fig, axes = figure(11, 6.5, 2, 2)
    keys = (("loglik", "log-likelihood"), ("leaves", "number of leaves"),
            ("train_mse", "train MSE"), ("test_mse", "test MSE"))
    for ax, (key, label) in zip(axes.ravel(), keys):
        for s in SAMPLERS:
            ax.plot(runs[s]["trace"][key], label=NAMES[s], lw=0.8)
        ax.axvline(n_burn, color="grey", lw=0.6, ls=":")
        ax.set_xlabel("sweep")
        ax.set_ylabel(label)
        if key in ("train_mse", "test_mse"):
            ax.set_yscale("log")
    axes[0, 0].legend()
    fig.suptitle(f"Hypercube-{D}: one tree, beta_s = {HYPERCUBE_BETA[D]}")
    return save(fig, path)


def main(argv: Sequence[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/bart", help="output directory")
    ap.add_argument("--quick", action="store_true", help="reduced sizes (smoke test)")
    ap.add_argument("--seeds", type=int, default=None,
                    help="hypercube data sets per D (default 3; quick: 1)")
    ap.add_argument("--no-peers", action="store_true", help="skip stochtree and pymc-bart")
    ap.add_argument("--sections", default="hypercube,california",
                    help="comma-separated parts to run: hypercube, california (our samplers "
                    "and the peers), california-peers (only PG on training set 0 and the "
                    "peers)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    quick = args.quick
    sections = {part.strip() for part in args.sections.split(",")}
    seeds = args.seeds or (1 if quick else 3)
    dims = (2, 3) if quick else (2, 3, 4, 5, 7)
    n_iter, n_burn = (200, 100) if quick else (2000, 1000)
    lines = ["# BART: PG, CGM and GrowPrune samplers", ""]
    lines.append(f"Sizes: {'QUICK (smoke test, not results)' if quick else 'full'}; "
                 f"{n_iter} sweeps, the first {n_burn} burn-in; ESS of the log-likelihood "
                 f"over the remaining sweeps, ESS/s over their CPU time (all samplers and "
                 f"peers run on one thread; CPU time, not wall time, because other jobs "
                 f"share the machine).")
    results: dict[str, Any] = {"environment": environment(list(argv or sys.argv[1:])),
                               "hypercube": {}, "california": {}}

    if "hypercube" in sections:
        # a) hypercube-D
        rows = []
        for D in dims:
            per_seed = []
            for seed in range(seeds):
                X, y, Xt, yt = hypercube(D, seed)
                runs = {s: run_ours(s, X, y, Xt, yt, 1, n_iter, n_burn, seed,
                                    alpha_s=0.95, beta_s=HYPERCUBE_BETA[D]) for s in SAMPLERS}
                if seed == 0:
                    trace_figure(D, runs, n_burn, out / f"hypercube_{D}.png")
                per_seed.append(runs)
            summary = {}
            for s in SAMPLERS:
                ess = [r[s]["ess"] for r in per_seed]
                ess_s = [r[s]["ess_per_s"] for r in per_seed]
                summary[s] = {"ess": ess, "ess_per_s": ess_s,
                              "s_per_sample": float(np.mean([r[s]["s_per_sample"]
                                                             for r in per_seed])),
                              "test_mse": [r[s]["test_mse"] for r in per_seed],
                              "mean_leaves": [r[s]["mean_leaves"] for r in per_seed],
                              "trace_seed0": per_seed[0][s]["trace"]}
            results["hypercube"][D] = summary
            rows.append([D] + [f"{np.mean(summary[s]['ess']):.1f} "
                               f"(min {min(summary[s]['ess']):.1f})"
                               for s in SAMPLERS]
                        + [f"{np.mean(summary[s]['ess_per_s']):.3g} (min "
                           f"{min(summary[s]['ess_per_s']):.3g})" for s in SAMPLERS]
                        + [" / ".join(_fmt(v) for v in THESIS_ESS[D]),
                           " / ".join(_fmt(v) for v in THESIS_ESS_S[D])])
            print(f"hypercube-{D} done", file=sys.stderr, flush=True)
        lines += ["", f"## Hypercube-D (Tables 4.1-4.2; mean and worst over {seeds} data sets)", "",
                  markdown_table(["D"] + [f"ESS {NAMES[s]}" for s in SAMPLERS]
                                 + [f"ESS/s {NAMES[s]}" for s in SAMPLERS]
                                 + ["thesis ESS C/GP/PG", "thesis ESS/s C/GP/PG"], rows)]
        rows = [[D] + [f"{np.mean(results['hypercube'][D][s]['mean_leaves']):.1f}"
                       for s in SAMPLERS]
                + [f"{np.mean(results['hypercube'][D][s]['test_mse']):.3g}" for s in SAMPLERS]
                + [f"{results['hypercube'][D]['pg']['s_per_sample'] * 1e3:.2f}"]
                for D in dims]
        lines += ["", "Posterior mean number of leaves (true tree: 2^D), test MSE of the "
                  "posterior mean, and PG milliseconds per sweep:", "",
                  markdown_table(["D"] + [f"leaves {NAMES[s]}" for s in SAMPLERS]
                                 + [f"test MSE {NAMES[s]}" for s in SAMPLERS]
                                 + ["PG ms/sweep"], rows)]

        # hypercube peers: one data set per D, the thesis' prior
        if not args.no_peers:
            rows = []
            for D in dims:
                X, y, Xt, yt = hypercube(D, 0)
                ours = results["hypercube"][D]["pg"]
                st = run_stochtree(X, y, Xt, yt, 1, n_iter - n_burn, 0, alpha=0.95,
                                   beta=HYPERCUBE_BETA[D], min_samples_leaf=1)
                # pymc-bart is slow: 200 tuning and 200 kept draws (quick: D = 2 only)
                pmc = None if quick and D > 2 else run_pymc_bart(
                    X, y, Xt, yt, 1, 10, min(200, n_iter - n_burn), min(200, n_burn), 0)
                results["hypercube"][D]["peers"] = {"stochtree": st, "pymc-bart": pmc}
                rows.append([D, _fmt(np.sqrt(np.mean(ours["test_mse"]))),
                             _fmt(st and st["test_rmse"]), _fmt(pmc and pmc["test_rmse"]),
                             _fmt(st and st["coverage"]), _fmt(pmc and pmc["coverage"]),
                             _fmt(ours["s_per_sample"] * 1e3),
                             _fmt(st and st["s_per_sample"] * 1e3),
                             _fmt(pmc and pmc["s_per_sample"] * 1e3)])
            lines += ["", "Hypercube peers (one tree, the same tree prior; data set 0; stochtree "
                      "also needs min_samples_leaf=1 to grow 2^D leaves of 10 points):", "",
                      markdown_table(["D", "RMSE PG", "RMSE stochtree", "RMSE pymc-bart",
                                      "cov90 stochtree", "cov90 pymc-bart", "ms/sample PG",
                                      "ms/sample stochtree", "ms/sample pymc-bart"], rows)]

    if sections & {"california", "california-peers"}:
        # b) California housing ("california-peers" alone: PG on training set 0 and the peers)
        X, y, trains, test = california(quick)
        n_trees = 20 if quick else 200
        cal_samplers = SAMPLERS if "california" in sections else ("pg",)
        if "california" not in sections:
            trains = trains[:1]
        cal = {s: [] for s in cal_samplers}
        for i, tr in enumerate(trains):
            for s in cal_samplers:
                r = run_ours(s, X[tr], y[tr], X[test], y[test], n_trees, n_iter, n_burn, i)
                r.pop("trace")
                cal[s].append(r)
            print(f"california training set {i} done", file=sys.stderr, flush=True)
        results["california"]["ours"] = cal
        rows = [[NAMES[s], _fmt(np.mean([r["test_mse"] for r in cal[s]]) / 1e10),
                 _fmt(np.mean([r["test_rmse"] for r in cal[s]])),
                 _fmt(np.mean([r["coverage"] for r in cal[s]])),
                 _fmt(np.mean([r["ess"] for r in cal[s]])),
                 _fmt(1e3 * np.mean([r["ess_per_s"] for r in cal[s]])),
                 _fmt(1e3 * np.mean([r["s_per_sample"] for r in cal[s]])),
                 _fmt(THESIS_CAL["ess"][k]), _fmt(THESIS_CAL["ess_s_1e3"][k])]
                for k, s in enumerate(SAMPLERS) if s in cal]
        lines += ["", f"## California housing (Tables 4.4-4.5; {len(trains)} training sets of "
                  f"{len(trains[0])}, test {len(test)}, {n_trees} trees, D = 8)", "",
                  markdown_table(["sampler", "test MSE (1e10 $^2)", "test RMSE ($)", "cov90",
                                  "ESS", "ESS/s x1e-3", "ms/sweep", "thesis ESS",
                                  "thesis ESS/s x1e-3"], rows)]

        if not args.no_peers:
            rows = []
            peer = {"stochtree": [], "pymc-bart": []}
            tr = trains[0]
            n_mcmc = n_iter - n_burn
            st = run_stochtree(X[tr], y[tr], X[test], y[test], n_trees, n_mcmc, 0)
            peer["stochtree"].append(st)
            # pymc-bart at the same M and particles as our PG; a shorter run (it is slow)
            pm_trees = 20 if quick else 50
            pm_draws, pm_tune = (20, 20) if quick else (200, 200)
            pmc = run_pymc_bart(X[tr], y[tr], X[test], y[test], pm_trees, 10, pm_draws, pm_tune, 0)
            pmc_all = run_pymc_bart(X[tr], y[tr], X[test], y[test], pm_trees, 10, pm_draws,
                                    pm_tune, 0, batch=1.0)
            peer["pymc-bart all trees"] = [pmc_all]
            ours_same = run_ours("pg", X[tr], y[tr], X[test], y[test], pm_trees,
                                 pm_draws + pm_tune, pm_tune, 0)
            ours_same.pop("trace")
            peer["pymc-bart"].append(pmc)
            peer["pg_same_as_pymc"] = ours_same
            results["california"]["peers"] = peer
            ours = cal["pg"][0]
            rows.append([f"PG (ours), M={n_trees}", _fmt(ours["test_rmse"]),
                         _fmt(ours["coverage"]), _fmt(ours["s_per_sample"] * 1e3)])
            rows.append([f"stochtree BART, M={n_trees}", _fmt(st and st["test_rmse"]),
                         _fmt(st and st["coverage"]), _fmt(st and st["s_per_sample"] * 1e3)])
            rows.append([f"PG (ours), M={pm_trees}, C=10", _fmt(ours_same["test_rmse"]),
                         _fmt(ours_same["coverage"]), _fmt(ours_same["s_per_sample"] * 1e3)])
            rows.append([f"pymc-bart PGBART, M={pm_trees}, C=10 (its default: 10 % of the trees "
                         f"per sample)", _fmt(pmc and pmc["test_rmse"]),
                         _fmt(pmc and pmc["coverage"]), _fmt(pmc and pmc["s_per_sample"] * 1e3)])
            rows.append([f"pymc-bart PGBART, M={pm_trees}, C=10, all trees per sample",
                         _fmt(pmc_all and pmc_all["test_rmse"]),
                         _fmt(pmc_all and pmc_all["coverage"]),
                         _fmt(pmc_all and pmc_all["s_per_sample"] * 1e3)])
            lines += ["", "California housing peers (training set 0, same test set):", "",
                      markdown_table(["method", "test RMSE ($)", "cov90",
                                      "CPU ms per posterior sample"],
                                     rows)]
            if st is None:
                lines.append("\nstochtree is not installed: skipped.")
            if pmc is None:
                lines.append("\npymc-bart is not available (set BART_PYMC_PYTHON to an interpreter "
                             "with pymc-bart): skipped.")
            if st is not None:
                ratio = ours["test_rmse"] / st["test_rmse"]
                lines.append(f"\nPG / stochtree test RMSE: {ratio:.3f}")
            if pmc is not None:
                lines.append(f"\npymc-bart CPU seconds per sample / ours at M={pm_trees}, C=10: "
                             f"{pmc['s_per_sample'] / ours_same['s_per_sample']:.1f}x with its "
                             f"default batch (it redraws 10 % of the trees per sample, we redraw "
                             f"all), per tree redrawn "
                             f"{10 * pmc['s_per_sample'] / ours_same['s_per_sample']:.1f}x")
            if pmc_all is not None:
                lines.append(f"\npymc-bart redrawing all trees per sample: CPU seconds per sample "
                             f"/ ours: {pmc_all['s_per_sample'] / ours_same['s_per_sample']:.1f}x")

    report = "\n".join(lines) + "\n"
    print(report, end="")
    (out / "report.md").write_text(report)
    (out / "results.json").write_text(json.dumps(results, default=float))
    return results


if __name__ == "__main__":
    main()
