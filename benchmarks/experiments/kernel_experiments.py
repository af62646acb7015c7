"""The Mondrian kernel paper's experiments (Balog et al., 2016, Section 8), on cpu_act and
synthetic data.

1. ``convergence`` (Fig. 6): relative test error of ridge regression on Mondrian kernel, random
   binning and random Fourier features against the number of non-zero features per row, next
   to exact Laplace kernel ridge regression (lifetime 1e-6, delta2 = 1e-4, exact solves).
2. ``width`` (Fig. 8): validation error against computation time for kernel-width selection:
   one Mondrian lifetime path against re-fitting Fourier features and random binning for each
   width tried by the paper's search (Section 8.2: doubling or halving from lifetime 1, then
   bisection); time to reach a width within 5 % of the best validation error; and the cost of
   a whole path against one fit at the terminal lifetime.
3. ``synthetic`` (Fig. 7): data drawn from a Laplace-kernel GP with lifetime 10; the lifetime
   that minimises validation error (and the one maximising the marginal likelihood).
4. ``forest`` (Fig. 9): Mondrian kernel against Mondrian forest on the same trees.

Settings the paper leaves out are those of its authors' code (github.com/matejbalog/
mondrian-kernel); each is said where it is used.  Writes ``<out>/report.md`` (also printed),
``<out>/results.json`` and one PNG per experiment.  ``--quick`` runs every experiment at toy
sizes (CI smoke test, well under a minute).  Run (cpu_act is found through ``MFBO_DATA_DIR``,
see :mod:`benchmarks.problems.data`)::

    python -m benchmarks.experiments.kernel_experiments [EXPERIMENT ...] [--quick] --out DIR
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from benchmarks.harness.environment import environment
from benchmarks.harness.figures import figure, save
from benchmarks.harness.tables import markdown_table
from benchmarks.harness.timing import median_time
from benchmarks.problems.data import load_cpu_act
from benchmarks.problems.regression_data import permuted_split
from surrogates import (LaplaceKernelRidge, MondrianForestRegressor, MondrianKernel,
                        MondrianKernelRidge, RandomBinningFeatures, RandomFourierFeatures,
                        forest_lifetime_path, laplace_kernel, lifetime_path, relative_error,
                        select_width)

#: ridge constant of exact solves, sum form: the paper's 1e-4 (Section 8, the value of Rahimi
#: & Recht, 2007)
DELTA2 = 1e-4
#: ridge constant of SGD, mean form (scikit-learn's ``alpha``).  The paper gives one constant
#: for every solver; its authors' code uses the same number as a mean-form ``alpha`` in SGD
#: (a sum-form delta2 of N * alpha, about 0.66 on cpu_act).  We follow the code, which made
#: the paper's SGD figures.
ALPHA = 1e-4
#: timed calls of a fit or a path (median after a warm-up)
REPEATS = 5


# --------------------------------------------------------------------------------------------
# data and small helpers
# --------------------------------------------------------------------------------------------


def cpu_split(data_home=None, seed=0, n_val=1000, quick=False):
    """cpu_act: 6,554 train / 819 test rows as in the paper (a random split: Rahimi & Recht's
    is not public), and a validation split of the last ``n_val`` training rows."""
    X, y = load_cpu_act(data_home)
    n_tr, n_te = (1500, 300) if quick else (6554, 819)
    s = permuted_split(X, y, n_tr, n_te, seed)
    if quick:
        n_val = 300
    return dict(X_train=s.X_train, y_train=s.y_train, X_test=s.X_test, y_test=s.y_test,
                X_fit=s.X_train[:-n_val], y_fit=s.y_train[:-n_val], X_val=s.X_train[-n_val:],
                y_val=s.y_train[-n_val:])


def ridge_error(Z, y, Zt, yt, delta2=DELTA2):
    """Relative test error of exact ridge (sum form, centred targets, no intercept); the dual
    form ``(Z Z^T + delta2 I)^-1`` when there are more columns than rows."""
    ybar = y.mean()
    if Z.shape[1] > Z.shape[0]:
        K = Z @ Z.T
        K = K.toarray() if sp.issparse(K) else K
        K[np.diag_indices_from(K)] += delta2
        a = scipy.linalg.solve(K, y - ybar, assume_a="pos")
        return relative_error(yt, ybar + Zt @ (Z.T @ a))
    if sp.issparse(Z):
        A = (Z.T @ Z).toarray()
        b = Z.T @ (y - ybar)
    else:
        A = Z.T @ Z
        b = Z.T @ (y - ybar)
    A[np.diag_indices_from(A)] += delta2
    w = scipy.linalg.solve(A, b, assume_a="pos")
    return relative_error(yt, ybar + Zt @ w)


def sgd_error(Z, y, Zt, yt, alpha=ALPHA, epochs=10, seed=0):
    """Relative test error of SGD as in the authors' code: scikit-learn's SGDRegressor, 10
    epochs, the old defaults (inverse-scaling learning rate, ``eta0=0.01``, ``power_t=0.25``)."""
    from sklearn.linear_model import SGDRegressor

    ybar = y.mean()
    m = SGDRegressor(alpha=alpha, fit_intercept=False, max_iter=epochs, tol=None,
                     learning_rate="invscaling", eta0=0.01, power_t=0.25, random_state=seed)
    m.fit(Z, y - ybar)
    return relative_error(yt, ybar + Zt @ m.coef_)


def _prefix_columns(Z, group_of_col, R, n_groups):
    """Columns of the first ``R`` trees/grids/frequencies, rescaled to an order-R map."""
    keep = group_of_col < R
    return Z[:, keep] * np.sqrt(n_groups / R)


# --------------------------------------------------------------------------------------------
# 1. convergence to exact Laplace KRR (Fig. 6)
# --------------------------------------------------------------------------------------------


def exp_convergence(d, quick, lifetime=1e-6, label="raw", Ms=None, repeats=None,
                    delta2=DELTA2):
    """Relative test error of each feature map against ``M`` (``repeats`` samples), and of
    exact Laplace KRR."""
    Xtr, ytr, Xte, yte = d["X_train"], d["y_train"], d["X_test"], d["y_test"]
    if Ms is None:
        Ms = [1, 5, 10] if quick else [1, 2, 3, 5, 7, 10, 15, 20, 30, 40, 50]
    if repeats is None:
        repeats = 1 if quick else 5
    Mmax = max(Ms)
    exact, t_exact = median_time(
        lambda: relative_error(yte, LaplaceKernelRidge(lifetime=lifetime, delta2=delta2)
                               .fit(Xtr, ytr).predict(Xte)), repeats=1)
    Xall = np.vstack([Xtr, Xte])
    n = len(Xtr)
    res = {k: np.empty((repeats, len(Ms))) for k in ("mondrian", "mondrian_inductive",
                                                     "binning", "fourier")}
    for r in range(repeats):
        # one sample of the largest order; the first R trees give a valid order-R map (so
        # the authors' code draws its error-against-M curves)
        mk = MondrianKernel(n_trees=Mmax, lifetime=lifetime, random_state=r).fit(Xall)
        Z = mk.transform(Xall)
        tree = mk.tree_of_feature_
        mi = MondrianKernel(n_trees=Mmax, lifetime=lifetime, random_state=r).fit(Xtr)
        Zi, Zit = mi.transform(Xtr), mi.transform(Xte)  # test rows by expected extension
        rb = RandomBinningFeatures(n_grids=Mmax, lifetime=lifetime, random_state=r).fit(Xall)
        B = rb.transform(Xall)
        grid = np.searchsorted(rb.bin_offsets_, np.arange(rb.n_bins_), side="right") - 1
        rf = RandomFourierFeatures(n_components=max(1, Mmax // 2), lifetime=lifetime,
                                   random_state=r).fit(Xtr)
        F = rf.transform(Xall)
        Rf = rf.n_components
        freq = np.concatenate([np.arange(Rf), np.arange(Rf)])
        for k, M in enumerate(Ms):
            Zm = _prefix_columns(Z, tree, M, Mmax).tocsr()
            res["mondrian"][r, k] = ridge_error(Zm[:n], ytr, Zm[n:], yte, delta2)
            Zim = _prefix_columns(Zi, mi.tree_of_feature_, M, Mmax).tocsr()
            Zitm = _prefix_columns(Zit, mi.tree_of_feature_, M, Mmax).tocsr()
            res["mondrian_inductive"][r, k] = ridge_error(Zim, ytr, Zitm, yte, delta2)
            Bm = _prefix_columns(B, grid, M, Mmax).tocsr()
            res["binning"][r, k] = ridge_error(Bm[:n], ytr, Bm[n:], yte, delta2)
            # M/2 frequencies: cos and sin give 2R = M non-zeros per row, as for the others
            # (the paper compares feature maps at equal non-zeros per row)
            R = max(1, M // 2)
            Fm = _prefix_columns(F, freq, R, Rf)
            res["fourier"][r, k] = ridge_error(Fm[:n], ytr, Fm[n:], yte, delta2)
    out = dict(label=label, lifetime=lifetime, delta2=delta2, M=Ms, repeats=repeats,
               exact=exact, exact_time=t_exact,
               mean={k: v.mean(0).tolist() for k, v in res.items()},
               std={k: v.std(0).tolist() for k, v in res.items()})
    gap = np.array(out["mean"]["mondrian"]) - exact
    out["best_mondrian_gap"] = float(gap.min())
    out["best_mondrian_M"] = int(Ms[int(np.argmin(gap))])
    return out


def plot_convergence(results, path):
    """Fig. 6: relative test error against M, one panel per variant."""
    fig, axes = figure(5.5 * len(results), 4, 1, len(results), squeeze=False)
    for ax, r in zip(axes[0], results):
        M = np.array(r["M"])
        for key, name, mk in [("fourier", "Fourier features", "^"),
                              ("binning", "random binning", "o"),
                              ("mondrian", "Mondrian kernel", "v"),
                              ("mondrian_inductive", "Mondrian (inductive)", "x")]:
            ax.errorbar(M, r["mean"][key], yerr=r["std"][key], marker=mk, ls="", label=name)
        ax.axhline(r["exact"], color="k", lw=2, label=f"exact Laplace KRR ({r['exact']:.2f} %)")
        ax.set_xlabel("M (non-zero features per row)")
        ax.set_ylabel("relative test error [%]")
        ax.set_title(f"cpu_act, {r['label']} features, lifetime {r['lifetime']:g}")
        ax.set_ylim(0, min(30, 1.5 * max(max(r["mean"]["fourier"]), r["exact"] + 1)))
        ax.legend(frameon=False, fontsize=8)
    save(fig, path)


# --------------------------------------------------------------------------------------------
# 2. fast kernel-width selection (Fig. 8) and the path cost
# --------------------------------------------------------------------------------------------


def _time_to(times, errors, target):
    """First time at which the running best error is <= target (None if never)."""
    best = np.minimum.accumulate(np.asarray(errors))
    hit = np.flatnonzero(best <= target)
    return float(np.asarray(times)[hit[0]]) if hit.size else None


def exp_width(d, quick):
    """Validation error against time of every width-selection method, and the path cost."""
    X, y, Xv, yv = d["X_fit"], d["y_fit"], d["X_val"], d["y_val"]
    nnz = 50 if quick else 350  # non-zero features per row, every method (paper: Section 8.2)
    steps_ff, steps_rb = (8, 6) if quick else (100, 50)
    Lam = 1e-6
    curves = {}

    # Mondrian kernel as in the paper: one SGD path to Lambda, one epoch per cut (mean-form
    # alpha)
    p = lifetime_path(X, y, Xv, yv, max_lifetime=Lam, n_trees=nnz, alpha=ALPHA, solver="sgd",
                      random_state=0)
    curves["Mondrian kernel (SGD path, 1 epoch per cut)"] = dict(
        time=p.runtime.tolist(), error=p.val_error.tolist(), lifetime=p.lifetimes.tolist())
    # the same trained only at 20 log-spaced lifetimes, 5 epochs each: with many cuts,
    # evaluating on a log-spaced grid costs far less and loses little of the curve
    grid = np.geomspace(Lam / 100, Lam, 20)
    pg = lifetime_path(X, y, Xv, yv, max_lifetime=Lam, n_trees=nnz, alpha=ALPHA, solver="sgd",
                       lifetimes=grid, sgd_epochs=5, random_state=0)
    curves["Mondrian kernel (SGD path, 5 epochs at 20 lifetimes)"] = dict(
        time=pg.runtime.tolist(), error=pg.val_error.tolist(), lifetime=pg.lifetimes.tolist())
    # exact path, M = 50 (dense C x C factor; C ~ 700 at Lambda)
    pe = lifetime_path(X, y, Xv, yv, max_lifetime=Lam, n_trees=min(nnz, 50), delta2=DELTA2,
                       random_state=0)
    curves["Mondrian kernel (exact path, M = 50)"] = dict(
        time=pe.runtime.tolist(), error=pe.val_error.tolist(), lifetime=pe.lifetimes.tolist())

    def rff_eval(lam):
        f = RandomFourierFeatures(n_components=nnz // 2, lifetime=lam, random_state=0).fit(X)
        return sgd_error(f.transform(X), y, f.transform(Xv), yv)

    def rb_eval(lam):
        f = RandomBinningFeatures(n_grids=nnz, lifetime=lam, random_state=0).fit(
            np.vstack([X, Xv]))  # as the authors' code: train and evaluation rows binned together
        return sgd_error(f.transform(X), y, f.transform(Xv), yv)

    def rff_exact(lam):
        f = RandomFourierFeatures(n_components=nnz // 2, lifetime=lam, random_state=0).fit(X)
        return ridge_error(f.transform(X), y, f.transform(Xv), yv)

    def rb_exact(lam):
        f = RandomBinningFeatures(n_grids=nnz, lifetime=lam, random_state=0).fit(
            np.vstack([X, Xv]))
        return ridge_error(f.transform(X), y, f.transform(Xv), yv)

    # like-for-like with the exact path: the same searches with exact ridge (delta2 = 1e-4)
    for name, f, n in [("Fourier features (width search, exact ridge)", rff_exact, steps_ff),
                       ("random binning (width search, exact ridge)", rb_exact, steps_rb)]:
        lams, errs, times = select_width(f, n)
        curves[name] = dict(time=times.tolist(), error=errs.tolist(), lifetime=lams.tolist())
    lams, errs, times = select_width(rff_eval, steps_ff)
    curves["Fourier features (width search, SGD)"] = dict(time=times.tolist(),
                                                          error=errs.tolist(),
                                                          lifetime=lams.tolist())
    lams, errs, times = select_width(rb_eval, steps_rb)
    curves["random binning (width search, SGD)"] = dict(time=times.tolist(), error=errs.tolist(),
                                                        lifetime=lams.tolist())
    best = min(min(c["error"]) for c in curves.values())
    # for reference: exact Laplace KRR's own validation curve over the lifetime
    ref_lams = np.geomspace(1e-8, 1e-4, 7 if quick else 17)
    ref_err = np.array([relative_error(yv, LaplaceKernelRidge(lifetime=lam, delta2=DELTA2)
                                       .fit(X, y).predict(Xv)) for lam in ref_lams])
    ref_best = float(ref_err.min())
    for c in curves.values():
        e = np.asarray(c["error"])
        c["best"] = float(e.min())
        c["best_lifetime"] = float(c["lifetime"][int(np.argmin(e))])
        c["time_to_5pct_overall"] = _time_to(c["time"], c["error"], 1.05 * best)
        c["time_to_5pct_own"] = _time_to(c["time"], c["error"], 1.05 * c["best"])
        c["total_time"] = float(c["time"][-1])

    _, t_fit_sgd = median_time(lambda: MondrianKernelRidge(n_trees=nnz, lifetime=Lam,
                                                           alpha=ALPHA, solver="sgd",
                                                           random_state=0)
                               .fit(X, y, X_unlabeled=Xv), repeats=3)
    cost = dict(exp_path_cost(d, n_trees=min(nnz, 50), lifetime=Lam),
                n_trees_sgd=nnz, fit_sgd_10_epochs=t_fit_sgd,
                path_sgd_every_cut=curves["Mondrian kernel (SGD path, 1 epoch per cut)"][
                    "total_time"],
                path_sgd_grid=curves["Mondrian kernel (SGD path, 5 epochs at 20 lifetimes)"][
                    "total_time"])
    return dict(nnz=nnz, best_overall=best, curves=curves, cost=cost,
                reference=dict(lifetimes=ref_lams.tolist(), val_error=ref_err.tolist(),
                               best=ref_best, best_lifetime=float(ref_lams[ref_err.argmin()])))


def exp_path_cost(d, n_trees=50, lifetime=1e-6):
    """The exact path against one exact fit at its terminal lifetime: same trees and rows
    (validation rows unlabelled in the fit), each the median of :data:`REPEATS` after a
    warm-up."""
    X, y, Xv, yv = d["X_fit"], d["y_fit"], d["X_val"], d["y_val"]
    _, t_fit = median_time(lambda: MondrianKernelRidge(n_trees=n_trees, lifetime=lifetime,
                                                       delta2=DELTA2, solver="primal",
                                                       random_state=0)
                           .fit(X, y, X_unlabeled=Xv), REPEATS)
    pe, t_path = median_time(lambda: lifetime_path(X, y, Xv, yv, max_lifetime=lifetime,
                                                   n_trees=n_trees, delta2=DELTA2,
                                                   random_state=0), REPEATS)
    return dict(n_trees_exact=n_trees, fit_exact=t_fit, path_exact=t_path,
                path_exact_trees=pe.tree_time, n_cuts=int(len(pe.lifetimes) - 1),
                n_cells=int(pe.n_cells[-1]), ratio_exact=t_path / t_fit)


def plot_width(r, path):
    """Fig. 8: validation error against computation time, one marker per method."""
    fig, ax = figure(8.5, 4.5)
    for (name, c), mk in zip(r["curves"].items(), [".", "s", "D", "v", "P", "^", "o"]):
        ax.scatter(np.maximum(c["time"], 1e-3), c["error"], marker=mk, s=12, label=name)
    ax.set_xscale("log")
    ax.set_ylim(0, 25)
    ax.set_xlabel("computation time [s]")
    ax.set_ylabel("validation relative error [%]")
    ax.axhline(1.05 * r["best_overall"], color="k", ls=":", lw=1,
               label="5 % above the best validation error")
    ax.set_title(f"cpu_act: kernel-width selection, {r['nnz']} non-zero features per row",
                 fontsize=10)
    ax.legend(frameon=False, fontsize=7)
    save(fig, path)


# --------------------------------------------------------------------------------------------
# 3. synthetic Laplace-GP data with a known lifetime (Fig. 7)
# --------------------------------------------------------------------------------------------


def laplace_gp_data(n, lifetime=10.0, noise_var=1e-4, D=2, seed=0):
    """``X ~ U[0,1]^D``, ``y = chol(K) eps + sqrt(noise_var) eps'`` (the generator of the
    authors' code)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, D))
    K = laplace_kernel(X, lifetime=lifetime)
    K[np.diag_indices(n)] += 1e-10
    y = np.linalg.cholesky(K) @ rng.standard_normal(n) + np.sqrt(noise_var) * rng.standard_normal(n)
    return X, y


def exp_synthetic(quick):
    """Lifetimes selected on Laplace-GP data with a known lifetime of 10."""
    lam0, noise = 10.0, 1e-4
    n = 300 if quick else 1000
    X, y = laplace_gp_data(3 * n, lam0, noise, seed=0)
    Xt, yt, Xv, yv, Xs, ys = X[:n], y[:n], X[n:2 * n], y[n:2 * n], X[2 * n:], y[2 * n:]
    M = 20 if quick else 50
    runs = {}
    for Lam in ([20.0] if quick else [100.0, 20.0]):
        # as the paper and its code: SGD, alpha = noise variance (prior variance 1), one epoch
        # per cut
        p = lifetime_path(Xt, yt, Xv, yv, X_test=Xs, y_test=ys, max_lifetime=Lam, n_trees=M,
                          alpha=noise, solver="sgd", random_state=0)
        runs[f"SGD path, M={M}, Lambda={Lam:g}"] = p
    # exact Bayesian ridge (delta2 = noise / prior variance): validation and marginal likelihood
    # exact ridge path with the SGD runs' sum-form constant (delta2 = N alpha); the dense factor
    # caps it at C = 3000 cells (lifetime ~ 20 with M = 10)
    Me = 10
    pe = lifetime_path(Xt, yt, Xv, yv, X_test=Xs, y_test=ys, max_lifetime=40.0, n_trees=Me,
                       alpha=noise, max_features=1500 if quick else 3000, random_state=0)
    runs[f"exact path, M={Me}, delta2={n * noise:g}"] = pe
    out = {}
    for name, p in runs.items():
        i = p.best_index
        row = dict(lambda_hat=p.best_lifetime, val_error=float(p.val_error[i]),
                   test_error=float(p.test_error[i]), n_cuts=int(len(p.lifetimes) - 1),
                   max_lifetime=float(p.lifetimes[-1]), seconds=float(p.runtime[-1]))
        if p.solver == "exact":
            j = int(np.nanargmax(p.log_ml))
            row.update(lambda_hat_ml=float(p.lifetimes[j]), test_error_ml=float(p.test_error[j]))
        out[name] = row
    exact = relative_error(ys, LaplaceKernelRidge(lifetime=lam0, delta2=noise).fit(Xt, yt)
                           .predict(Xs))
    # reference: exact Laplace KRR (the true model class) on a lifetime grid
    grid = np.geomspace(2.5, 40.0, 9)
    ref = []
    for lam in grid:
        m = LaplaceKernelRidge(lifetime=lam, delta2=noise).fit(Xt, yt)
        ref.append((relative_error(yv, m.predict(Xv)), relative_error(ys, m.predict(Xs)),
                    m.log_marginal_likelihood_))
    ref = np.array(ref)
    i, j = int(ref[:, 0].argmin()), int(ref[:, 2].argmax())
    out["exact Laplace KRR, lifetime grid 2.5..40 (reference)"] = dict(
        lambda_hat=float(grid[i]), val_error=float(ref[i, 0]), test_error=float(ref[i, 1]),
        lambda_hat_ml=float(grid[j]), test_error_ml=float(ref[j, 1]), seconds=float("nan"),
        n_cuts=0, max_lifetime=40.0)
    return dict(lambda0=lam0, noise_var=noise, n=n, runs=out, exact_krr_test_at_lambda0=exact,
                reference_grid=grid.tolist(), reference=ref.tolist(), _paths=runs)


def plot_synthetic(r, path):
    """Fig. 7: train, validation and test error against the lifetime, one panel per path."""
    paths = r["_paths"]
    fig, axes = figure(5.5 * len(paths), 4, 1, len(paths), squeeze=False)
    for ax, (name, p) in zip(axes[0], paths.items()):
        lam = np.maximum(p.lifetimes, 1e-3)
        ax.plot(lam, p.train_error, drawstyle="steps-post", lw=1, label="train")
        ax.plot(lam, p.val_error, drawstyle="steps-post", lw=2, label="validation")
        ax.plot(lam, p.test_error, drawstyle="steps-post", lw=1, label="test")
        ax.axvline(r["lambda0"], color="k", ls=":", label="true lifetime")
        ax.axvline(p.best_lifetime, color="C1", ls="--", label="selected")
        if p.solver == "exact":
            ax.axvline(p.best_lifetime_ml, color="C3", ls="-.", label="max marginal lik.")
        ax.set_xscale("log")
        ax.set_xlim(1e-2, p.lifetimes[-1])
        ax.set_ylim(0, 110)
        ax.set_xlabel("lifetime")
        ax.set_ylabel("relative error [%]")
        ax.set_title(name, fontsize=9)
        ax.legend(frameon=False, fontsize=8)
    save(fig, path)


# --------------------------------------------------------------------------------------------
# 4. Mondrian kernel vs Mondrian forest (Fig. 9)
# --------------------------------------------------------------------------------------------


def exp_forest(d, quick):
    """Mondrian kernel against Mondrian forest on the same trees, over the lifetime."""
    X, y, Xv, yv, Xt, yt = d["X_fit"], d["y_fit"], d["X_val"], d["y_val"], d["X_test"], d["y_test"]
    M = 10 if quick else 50
    Lam = 3e-6 if quick else 1e-5
    kw = dict(X_test=Xt, y_test=yt, max_lifetime=Lam, n_trees=M, random_state=0)
    ks = lifetime_path(X, y, Xv, yv, alpha=ALPHA, solver="sgd", **kw)  # the paper's: 1 epoch/cut
    fp = forest_lifetime_path(X, y, Xv, yv, gamma2=DELTA2, **kw)  # same trees, gamma2 = delta2
    ke = lifetime_path(X, y, Xv, yv, delta2=DELTA2, max_features=M * 40, **kw)
    # the library's forest (hierarchical empirical posterior), raw units, re-fitted per lifetime
    lams = np.geomspace(1e-7, Lam, 3 if quick else 7)
    bounds = np.column_stack([np.zeros(X.shape[1]), np.ones(X.shape[1])])  # identity scaling
    mf = []
    for lam in lams:
        f = MondrianForestRegressor(n_estimators=M, lifetime=lam, min_samples_split=2,
                                    feature_bounds=bounds, random_state=0).fit(X, y)
        mf.append((relative_error(y, f.predict(X)), relative_error(yt, f.predict(Xt))))
    out = {}
    for name, p in [("Mondrian kernel (SGD path)", ks), ("Mondrian kernel (exact path)", ke),
                    ("Mondrian forest (per-tree ridge, same trees)", fp)]:
        i = int(np.argmin(p.test_error))
        j = p.best_index
        out[name] = dict(best_test=float(p.test_error[i]), at_lifetime=float(p.lifetimes[i]),
                         test_at_val_best=float(p.test_error[j]), val_best_lifetime=p.best_lifetime,
                         max_lifetime=float(p.lifetimes[-1]))
    i = int(np.argmin([m[1] for m in mf]))
    out["MondrianForestRegressor (refit per lifetime)"] = dict(
        best_test=mf[i][1], at_lifetime=float(lams[i]), test_at_val_best=None,
        val_best_lifetime=None, max_lifetime=float(lams[-1]))
    return dict(M=M, max_lifetime=Lam, results=out, mf_lifetimes=lams.tolist(),
                mf_errors=mf, _paths=dict(kernel_sgd=ks, kernel_exact=ke, forest=fp))


def plot_forest(r, path):
    """Fig. 9: train and test error of kernel and forest against the lifetime."""
    P = r["_paths"]
    fig, ax = figure(8, 4.5)
    for p, name, c in [(P["kernel_sgd"], "Mondrian kernel (SGD)", "C2"),
                       (P["kernel_exact"], "Mondrian kernel (exact)", "C0"),
                       (P["forest"], "Mondrian forest (same trees)", "C3")]:
        lam = np.maximum(p.lifetimes, 1e-9)
        ax.plot(lam, p.train_error, drawstyle="steps-post", color=c, lw=1, ls="--",
                label=f"{name}, train")
        ax.plot(lam, p.test_error, drawstyle="steps-post", color=c, lw=2, label=f"{name}, test")
    mf = np.array(r["mf_errors"])
    ax.plot(r["mf_lifetimes"], mf[:, 1], "o-", color="C4", label="MondrianForestRegressor, test")
    ax.set_xscale("log")
    ax.set_xlim(1e-8, r["max_lifetime"])
    ax.set_ylim(0, 25)
    ax.set_xlabel("lifetime")
    ax.set_ylabel("relative error [%]")
    ax.set_title(f"cpu_act: kernel vs forest, M = {r['M']}")
    ax.legend(frameon=False, fontsize=7)
    save(fig, path)


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------


def _fmt(v, f="{:.2f}", none="never"):
    return none if v is None else f.format(v)


def _path_cost_table(k) -> str:
    """The exact path's cost against one fit (and, from ``width``, the SGD variants')."""
    rows = [[f"exact fit at Lambda (M = {k['n_trees_exact']}, C = {k['n_cells']})",
             f"{k['fit_exact']:.3f}"],
            [f"exact path over all {k['n_cuts']} cuts (trees: {k['path_exact_trees']:.3f})",
             f"{k['path_exact']:.3f} (**{k['ratio_exact']:.2f}x**)"]]
    if "fit_sgd_10_epochs" in k:
        rows += [[f"SGD fit at Lambda, 10 epochs (M = {k['n_trees_sgd']})",
                  f"{k['fit_sgd_10_epochs']:.3f}"],
                 ["SGD path, 1 epoch per cut", f"{k['path_sgd_every_cut']:.3f}"],
                 ["SGD path, 5 epochs at 20 lifetimes", f"{k['path_sgd_grid']:.3f}"]]
    return markdown_table(["", "seconds"], rows)


_COST_NOTE = (f"same trees and rows, median of {REPEATS} after a warm-up, BLAS "
              f"single-threaded")


def report(res, cmd):
    """The markdown report of the experiments run."""
    L = ["# Mondrian kernel experiments", "", f"Command: `{cmd}`", ""]
    if "convergence" in res:
        for r in res["convergence"]:
            keys = ("mondrian", "mondrian_inductive", "binning", "fourier")
            L += [f"## 1. Convergence to exact Laplace KRR (Fig. 6; {r['label']} features)", "",
                  f"lifetime {r['lifetime']:g}, delta2 {r['delta2']:g} (exact ridge), "
                  f"{r['repeats']} repeats (mean ± sd); exact Laplace KRR: "
                  f"**{r['exact']:.2f} %** ({r['exact_time']:.1f} s). Relative test error [%]:",
                  "", markdown_table(
                      ["M", "Mondrian", "Mondrian (inductive)", "random binning",
                       "Fourier (M/2 freq.)"],
                      [[M, *(f"{r['mean'][key][k]:.2f} ± {r['std'][key][k]:.2f}" for key in keys)]
                       for k, M in enumerate(r["M"])]),
                  "", f"Smallest Mondrian − exact gap: {r['best_mondrian_gap']:+.2f} points "
                  f"(M = {r['best_mondrian_M']}).", ""]
    if "width" in res:
        r = res["width"]
        L += ["## 2. Fast kernel-width selection (Fig. 8)", "",
              f"{r['nnz']} non-zero features per row; validation split from train; best "
              f"validation error over all methods {r['best_overall']:.2f} %.", "",
              "For reference, exact Laplace KRR's own best validation error on a grid of "
              f"{len(r['reference']['lifetimes'])} lifetimes is {r['reference']['best']:.2f} % at "
              f"lifetime {r['reference']['best_lifetime']:.3g}.", "",
              markdown_table(
                  ["method", "best val. error [%]", "at lifetime",
                   "time to ≤ 1.05 × overall best [s]", "time to ≤ 1.05 × own best [s]",
                   "total time [s]"],
                  [[name, f"{c['best']:.2f}", f"{c['best_lifetime']:.3g}",
                    _fmt(c['time_to_5pct_overall']), _fmt(c['time_to_5pct_own']),
                    f"{c['total_time']:.2f}"] for name, c in r["curves"].items()])]
        c = r["curves"]
        mk = [v for k, v in c.items() if k.startswith("Mondrian")]
        base = [v for k, v in c.items() if not k.startswith("Mondrian")]
        for key, what in [("time_to_5pct_overall", "overall best"),
                          ("time_to_5pct_own", "own best")]:
            tm = [v[key] for v in mk if v[key] is not None]
            tb = [v[key] for v in base if v[key] is not None]
            if tm and tb:
                L.append(f"\nSpeed-up to within 5 % of the {what} (fastest baseline / fastest "
                         f"Mondrian): **{min(tb) / min(tm):.1f}x**.")
            elif tm:
                L.append(f"\nWithin 5 % of the {what}: only the Mondrian kernel gets there.")
        L += ["", f"Path cost vs one fit at the terminal lifetime ({_COST_NOTE}):", "",
              _path_cost_table(r["cost"]), ""]
    if "cost" in res:
        L += [f"## Exact path cost vs one fit at the terminal lifetime ({_COST_NOTE})", "",
              _path_cost_table(res["cost"]), ""]
    if "synthetic" in res:
        r = res["synthetic"]
        L += ["## 3. Recovering a known lifetime (Fig. 7)", "",
              f"Laplace-GP data, D = 2, true lifetime {r['lambda0']:g}, noise variance "
              f"{r['noise_var']:g}, {r['n']} train / validation / test rows; exact Laplace KRR "
              f"at the true lifetime: {r['exact_krr_test_at_lambda0']:.2f} % test error.", "",
              markdown_table(
                  ["path", "selected lifetime (val.)", "val. error [%]", "test error [%]",
                   "lifetime (max. marg. lik.)", "test error there [%]", "seconds"],
                  [[name, f"{row['lambda_hat']:.2f}", f"{row['val_error']:.2f}",
                    f"{row['test_error']:.2f}", _fmt(row.get('lambda_hat_ml'), none='–'),
                    _fmt(row.get('test_error_ml'), none='–'),
                    _fmt(None if np.isnan(row['seconds']) else row['seconds'], '{:.1f}', '–')]
                   for name, row in r["runs"].items()]), ""]
    if "forest" in res:
        r = res["forest"]
        L += [f"## 4. Mondrian kernel vs Mondrian forest (Fig. 9), M = {r['M']}", "",
              markdown_table(
                  ["model", "best test error [%]", "at lifetime",
                   "test error at the val.-selected lifetime [%]", "selected lifetime"],
                  [[name, f"{row['best_test']:.2f}", f"{row['at_lifetime']:.3g}",
                    _fmt(row['test_at_val_best'], none='–'),
                    _fmt(row['val_best_lifetime'], '{:.3g}', none='–')]
                   for name, row in r["results"].items()]), ""]
    return "\n".join(L)


def _jsonable(res):
    """``res`` without its private (``_``) entries, numpy scalars as Python numbers."""
    def clean(o):
        if isinstance(o, dict):
            return {k: clean(v) for k, v in o.items() if not k.startswith("_")}
        if isinstance(o, (list, tuple)):
            return [clean(v) for v in o]
        if isinstance(o, (np.floating, np.integer)):
            return o.item()
        return o
    return clean(res)


def main(argv=None):
    """Command-line entry point; returns the results."""
    ap = argparse.ArgumentParser(prog=f"python -m {__spec__.name}",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("experiments", nargs="*", default=["convergence", "width", "synthetic",
                                                       "forest"],
                    help="any of convergence, width, synthetic, forest (default: all), or "
                         "cost (only the exact path's cost against one fit; part of width)")
    ap.add_argument("--out", default="results/kernel")
    ap.add_argument("--data-home", default=None)
    ap.add_argument("--quick", action="store_true", help="toy sizes (CI smoke test)")
    ap.add_argument("--m-values", default=None,
                    help="convergence: comma list of M (default 1,2,3,5,7,10,15,20,30,40,50)")
    ap.add_argument("--repeats", type=int, default=None,
                    help="convergence: repetitions per M (default 5)")
    ap.add_argument("--raw-only", action="store_true",
                    help="convergence: skip the standardised-inputs variant")
    ap.add_argument("--delta2", default=None,
                    help="convergence: comma list of ridge constants (sum form) to run the raw "
                         "variant with (default: the paper's 1e-4 only)")
    args = ap.parse_args(argv)
    Ms = None if args.m_values is None else [int(m) for m in args.m_values.split(",")]
    bad = set(args.experiments) - {"convergence", "width", "synthetic", "forest", "cost"}
    if bad:
        ap.error(f"unknown experiments {sorted(bad)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    argv = sys.argv[1:] if argv is None else list(argv)
    cmd = "python -m benchmarks.experiments.kernel_experiments " + " ".join(argv)
    res = {"environment": environment(argv)}
    # small dense solves: multi-threaded BLAS is slower than one thread and makes timings noisy
    with threadpool_limits(1, user_api="blas"):
        need_cpu = set(args.experiments) & {"convergence", "width", "forest", "cost"}
        d = cpu_split(args.data_home, quick=args.quick) if need_cpu else None
        if "convergence" in args.experiments:
            d2s = [DELTA2] if args.delta2 is None else [float(v) for v in
                                                          args.delta2.split(",")]
            res["convergence"] = [exp_convergence(d, args.quick, Ms=Ms, repeats=args.repeats,
                                                  delta2=v,
                                                  label="raw" if len(d2s) == 1 else
                                                  f"raw, delta2 {v:g}") for v in d2s]
            if not args.raw_only:
                mu, sd = d["X_train"].mean(0), d["X_train"].std(0)
                ds = dict(d, X_train=(d["X_train"] - mu) / sd, X_test=(d["X_test"] - mu) / sd)
                res["convergence"].append(exp_convergence(
                    ds, args.quick, lifetime=0.03, label="standardised", Ms=Ms,
                    repeats=args.repeats))
            plot_convergence(res["convergence"], out / "convergence.png")
        if "width" in args.experiments:
            res["width"] = exp_width(d, args.quick)
            plot_width(res["width"], out / "width_selection.png")
        if "cost" in args.experiments and "width" not in args.experiments:
            res["cost"] = exp_path_cost(d)
        if "synthetic" in args.experiments:
            res["synthetic"] = exp_synthetic(args.quick)
            plot_synthetic(res["synthetic"], out / "synthetic_lifetime.png")
        if "forest" in args.experiments:
            res["forest"] = exp_forest(d, args.quick)
            plot_forest(res["forest"], out / "kernel_vs_forest.png")
    text = report(res, cmd)
    print(text)
    (out / "report.md").write_text(text + "\n")
    (out / "results.json").write_text(json.dumps(_jsonable(res), indent=1))
    return res


if __name__ == "__main__":
    main()
