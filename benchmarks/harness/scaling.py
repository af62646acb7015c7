"""How mfbo's Bayesian optimization scales with the number of observations.

``mfbo scale --out results/scaling`` (or ``python -m benchmarks.harness.scaling --out ...``;
``--quick`` for tiny sizes, ``--only overhead,scoring`` for some parts) writes ``results.json``,
``report.md`` (also printed) and ``overhead.png`` into ``--out``.  Five parts:

* **overhead**: a real sequential ask/tell loop on a cheap objective (``--problem``, default
  Branin) for ``mondrian`` and ``rf-smac`` (:class:`mfbo.Optimizer` with the settings of
  :mod:`benchmarks.harness.methods`) and a GP (scikit-optimize's
  ``Optimizer(base_estimator="GP")`` if installed, else scikit-learn's ``GaussianProcessRegressor`` refitted after every tell with EI
  over random points).  Ask and tell are timed separately at every step; a method stops at
  ``--n-max`` evaluations or once its optimizer time exceeds its ``--time-budget``.  Table:
  medians over the window of steps ``n - n/10 < i <= n`` for n = 100, 1,000, 10,000; plot:
  ``overhead.png`` (log-log, binned medians).
  Branin is the default because it is the papers' BO problem and the most demanding case for
  the trees: its minima are found within ~50 evaluations, after which the proposals pile up
  around them, so cells get ever smaller and paths deeper; its 2-D acquisition search is also
  the cheapest, which lets the Mondrian run reach 10,000 evaluations within its budget.
* **scoring**: ``predict(C, return_std=True)`` and the full UCB score (the optimizer's
  ``MondrianModel.predict`` + ``ucb``) over 250,000 random candidates, 10 trees, for forests
  grown online as in BO (D=2 with 50 observations, D=6 with 200); median of 5 calls after a
  warm-up (:mod:`benchmarks.harness.timing`); throughput in points x trees per second.  Also a
  1,000-point batch, the size of one local-search round of the acquisition maximiser.
* **memory**: bytes of the forest's arrays per node and per observation (allocated and in
  use) and pickle size and (un)pickling time for 1k and 10k observations (D=2 and 6, grown one
  ``partial_fit`` at a time); and the journal: telling 10,000 evaluated configurations to an
  :class:`mfbo.Optimizer` in memory and with SQLite storage, file size, and the time to reload
  the study (replay + refit).
* **batch**: ``Optimizer.ask(n)`` for n = 8, 32, 128 with ``batch_strategy`` ``"thompson"`` and
  ``"constant_liar"`` at 200 observations.
* **coldstart**: a fresh process imports mfbo, runs the initial design of a 2-D study and
  makes the first model-based proposal; with an empty numba cache (``NUMBA_CACHE_DIR`` set to a
  new directory: everything used is compiled) and again with that cache filled.

Timings depend on the machine's load: the environment record
(:mod:`benchmarks.harness.environment`) holds the load averages before, and ``load_after`` those
after.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from benchmarks.harness.cli import CommandError, command_main
from benchmarks.harness.environment import ROOT, environment, save_diff
from benchmarks.harness.figures import figure, save
from benchmarks.harness.progress import progress
from benchmarks.harness.tables import markdown_table
from benchmarks.harness.timing import clock, median_time, timed

DESCRIPTION = """\
Measure how mfbo's Bayesian optimization scales with the number of observations: time per
ask and per tell of a sequential loop (mondrian, rf-smac, a GP) up to --n-max evaluations,
candidate-scoring throughput (250,000 candidates, 10 trees), memory per node and per
observation, pickle and journal costs, batch asks, and cold start with an empty and a filled
numba cache. Writes results.json, report.md and overhead.png into --out."""

__all__ = ["PARTS", "overhead", "scoring", "memory", "journal", "batch", "coldstart",
           "summarize_overhead", "to_markdown", "plot_overhead", "run", "add_arguments",
           "run_from_args", "main"]

PARTS = ("overhead", "scoring", "memory", "batch", "coldstart")
OVERHEAD_METHODS = ("mondrian", "rf-smac", "gp")
TABLE_N = (100, 1_000, 10_000)
#: seconds of optimizer time after which a method of the overhead loop stops
DEFAULT_BUDGETS = {"mondrian": 900.0, "rf-smac": 300.0, "gp": 120.0}


def _check_overhead_methods(names) -> None:
    """``ValueError`` unless every name is ``"gp"`` or one of mfbo's own methods of ``mfbo
    bench`` (:data:`benchmarks.harness.methods.METHODS`: ``mondrian``, ``rf-smac``, the
    ablations ...)."""
    from benchmarks.harness.methods import METHODS, optimizer_settings

    def known(name):
        if name == "gp":
            return True
        try:
            optimizer_settings(name)
        except ValueError:  # a peer, or no method of that name
            return False
        return True
    unknown = sorted(n for n in names if not known(n))
    if unknown:
        own = [m for m in METHODS if known(m)]
        raise ValueError(f"unknown method(s) {unknown}; methods are gp and mfbo's own methods of "
                         f"mfbo bench: {', '.join(own)}.")


def _budget(budgets: dict, name: str) -> float:
    """The time budget of ``name``: given, or its default (a Mondrian variant's: mondrian's)."""
    if name in budgets:
        return budgets[name]
    if "*" in budgets:
        return budgets["*"]
    return DEFAULT_BUDGETS.get(name, DEFAULT_BUDGETS["mondrian"])


def _progress(message: str) -> None:
    progress("scaling", message)


def _unit_problem(name: str):
    """``(problem, f)`` with ``f`` the problem's function on unit-cube rows."""
    from benchmarks.problems.problems import get_problem

    problem = get_problem(name)
    b = problem.bounds()
    return problem, lambda U: problem.f(b[:, 0] + np.atleast_2d(U) * (b[:, 1] - b[:, 0]))


def _random_params(problem, n: int, seed: int) -> tuple[list[dict], np.ndarray]:
    """``n`` uniform random configurations of ``problem`` as dicts, and their losses."""
    X = problem.random_grid(n, seed)
    return [dict(zip(problem.names, map(float, row))) for row in X], problem.f(X)


def _mfbo_optimizer(problem, seed: int, method: str = "mondrian", **kwargs):
    import mfbo
    from benchmarks.harness.methods import optimizer_settings

    return mfbo.Optimizer(problem.space, random_state=seed,
                          **{**optimizer_settings(method), **kwargs})


# -- overhead ---------------------------------------------------------------------------------
class _SklearnGP:
    """A minimal GP optimizer: ``GaussianProcessRegressor`` (constant x Matern 5/2 with one
    length scale per dimension, ``normalize_y``) refitted after every tell, EI maximised over
    10,000 random points, 10 random initial points."""

    def __init__(self, bounds: np.ndarray, seed: int, n_initial: int = 10,
                 n_candidates: int = 10_000):
        self.lo, self.hi = bounds[:, 0], bounds[:, 1]
        self.rng = np.random.default_rng(seed)
        self.n_initial, self.n_candidates = n_initial, n_candidates
        self.U, self.y, self.gp = [], [], None

    def ask(self) -> list[float]:
        D = self.lo.size
        if self.gp is None:
            u = self.rng.random(D)
        else:
            from acquisitions import expected_improvement

            C = self.rng.random((self.n_candidates, D))
            mean, std = self.gp.predict(C, return_std=True)
            u = C[int(np.argmax(expected_improvement(mean, std, min(self.y))))]
        return list(self.lo + u * (self.hi - self.lo))

    def tell(self, x, y: float) -> None:
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern

        self.U.append((np.asarray(x) - self.lo) / (self.hi - self.lo))
        self.y.append(float(y))
        if len(self.y) >= self.n_initial:
            kernel = ConstantKernel() * Matern(length_scale=np.ones(self.lo.size), nu=2.5)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # ConvergenceWarning of the length scales
                self.gp = GaussianProcessRegressor(kernel, normalize_y=True, random_state=0).fit(
                    np.asarray(self.U), np.asarray(self.y))


def _gp_loop(problem, seed: int, implementation: str):
    """``(label, ask, evaluate, tell)`` of the GP baseline; ``implementation`` is ``"auto"``
    (scikit-optimize if installed), ``"skopt"`` or ``"sklearn"``."""
    if implementation == "auto":
        import importlib.util
        implementation = "skopt" if importlib.util.find_spec("skopt") else "sklearn"
    bounds = problem.bounds()
    if implementation == "skopt":
        import skopt

        opt = skopt.Optimizer([tuple(b) for b in bounds.tolist()], base_estimator="GP",
                              n_initial_points=10, random_state=seed)

        def tell(x, y):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # repeated points, length-scale bounds
                opt.tell(x, y)
        ask = opt.ask
    elif implementation == "sklearn":
        opt = _SklearnGP(bounds, seed)
        ask, tell = opt.ask, opt.tell
    else:
        raise ValueError(f"gp must be 'auto', 'skopt' or 'sklearn', got {implementation!r}.")
    return f"gp ({implementation})", ask, lambda x: float(problem.f(np.array([x]))[0]), tell


def _time_loop(ask, evaluate, tell, n_max: int, budget: float, name: str,
               scoring=None) -> dict:
    """Sequential ask / evaluate / tell; ask and tell seconds of every step, and with
    ``scoring`` (a callable returning the seconds the last ask spent in the surrogate's
    predictions) the candidate-scoring part of each ask."""
    ask_s, tell_s, score_s = [], [], []
    spent, last = 0.0, clock()
    while len(ask_s) < n_max and spent < budget:
        t0 = clock()
        x = ask()
        t1 = clock()
        y = evaluate(x)
        t2 = clock()
        tell(x, y)
        t3 = clock()
        ask_s.append(t1 - t0)
        tell_s.append(t3 - t2)
        if scoring is not None:
            score_s.append(scoring())
        spent += (t1 - t0) + (t3 - t2)
        if t3 - last > 60:
            last = t3
            _progress(f"overhead {name}: n={len(ask_s)}, {spent:.0f} s of optimizer time")
    stopped = "n_max" if len(ask_s) >= n_max else "time budget"
    _progress(f"overhead {name}: stopped at n={len(ask_s)} ({stopped}), {spent:.1f} s")
    out = {"score_s": [round(t, 7) for t in score_s]} if scoring is not None else {}
    return {**out, "ask_s": [round(t, 7) for t in ask_s],
            "tell_s": [round(t, 7) for t in tell_s], "n": len(ask_s), "stopped": stopped,
            "optimizer_s": spent, "budget_s": budget}


def overhead(problem: str = "branin", methods=OVERHEAD_METHODS, n_max: int = 10_000,
             budgets: dict | None = None, seed: int = 0, gp: str = "auto") -> dict:
    """Per-step ask and tell seconds of each method's sequential loop on ``problem``."""
    from benchmarks.problems.problems import get_problem

    p = get_problem(problem)
    budgets = budgets or {}
    out = {"problem": p.name, "n_max": int(n_max), "seed": seed, "methods": {}}
    for name in methods:
        scoring = None
        if name == "gp":
            label, ask, evaluate, tell = _gp_loop(p, seed, gp)
        else:
            opt = _mfbo_optimizer(p, seed, name)
            label, ask, scoring = name, opt.ask, _time_predictions(opt.model)
            evaluate = lambda trial: p(**trial.params)  # noqa: E731
            tell = opt.tell
        budget = _budget(budgets, name)
        _progress(f"overhead {label} on {p.name}: up to {n_max} steps, budget {budget:g} s")
        out["methods"][name] = {"label": label,
                                **_time_loop(ask, evaluate, tell, n_max, budget, label, scoring)}
    return out


def _time_predictions(model):
    """Wrap ``model.predict`` (the acquisition's candidate scoring) with a stopwatch; returns
    a callable giving the seconds spent in it since its previous call."""
    spent = [0.0]
    predict = model.predict

    def timed_predict(X):
        t0 = clock()
        try:
            return predict(X)
        finally:
            spent[0] += clock() - t0

    model.predict = timed_predict

    def take() -> float:
        s, spent[0] = spent[0], 0.0
        return s
    return take


def _window(n: int) -> slice:
    """Steps ``n - max(5, n // 10) < i <= n`` (1-based) as a slice of the per-step arrays."""
    return slice(max(0, n - max(5, n // 10)), n)


def table_n(n_max: int) -> list[int]:
    """The table's n: 100, 1,000, 10,000 up to ``n_max`` (``[n_max]`` if none fits)."""
    return [n for n in TABLE_N if n <= n_max] or [int(n_max)]


def _window_stats(ask: np.ndarray, tell: np.ndarray, n: int,
                  score: np.ndarray | None = None) -> dict:
    w = _window(n)
    out = {"ask_ms": float(np.median(ask[w])), "tell_ms": float(np.median(tell[w])),
           "total_ms": float(np.median(ask[w] + tell[w])),
           "total_mean_ms": float(np.mean(ask[w] + tell[w]))}
    if score is not None and score.size:
        out["score_ms"] = float(np.median(score[w]))
        out["rest_ms"] = float(np.median(ask[w] - score[w] + tell[w]))
    return out


def summarize_overhead(result: dict) -> dict:
    """``method -> {"at": {n: stats or None}, "last": stats}``: the medians of the ask, tell
    and ask+tell milliseconds (``ask_ms``, ``tell_ms``, ``total_ms``) and the mean ask+tell
    (``total_mean_ms``) over the window of steps up to each table n (None where the method
    stopped before n) and up to the last step it made (with its ``n``)."""
    out = {}
    for name, r in result["methods"].items():
        ask, tell = np.asarray(r["ask_s"]) * 1e3, np.asarray(r["tell_s"]) * 1e3
        score = np.asarray(r.get("score_s", [])) * 1e3
        at = {n: _window_stats(ask, tell, n, score) if r["n"] >= n else None
              for n in table_n(result["n_max"])}
        last = {"n": r["n"], **_window_stats(ask, tell, r["n"], score)} if r["n"] else None
        out[name] = {"at": at, "last": last}
    return out


def plot_overhead(result: dict, path: str | os.PathLike) -> None:
    """Log-log medians of ask+tell, ask and tell seconds against n, over log-spaced bins."""
    fig, axes = figure(15, 4.5, 1, 3, sharex=True, sharey=True)
    for name, r in result["methods"].items():
        ask, tell = np.asarray(r["ask_s"]), np.asarray(r["tell_s"])
        if ask.size == 0:
            continue
        edges = np.unique(np.geomspace(1, ask.size + 1, 40).astype(int))
        centres = np.sqrt(edges[:-1] * np.maximum(edges[1:] - 1, edges[:-1]))
        for ax, t in zip(axes, (ask + tell, ask, tell)):
            med = [np.median(t[a - 1:b - 1]) for a, b in zip(edges[:-1], edges[1:])]
            ax.plot(centres, np.maximum(med, 1e-6), marker=".", label=r["label"])
    for ax, title in zip(axes, ("ask + tell", "ask (acquisition search)",
                                "tell (surrogate update, journal)")):
        ax.set(xscale="log", yscale="log", xlabel="n (evaluation number)", title=title)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("seconds per step (binned median)")
    axes[0].legend()
    fig.suptitle(f"mfbo optimizer overhead on {result['problem']}")
    save(fig, path)


# -- candidate scoring ------------------------------------------------------------------------
def _bo_model(f, D: int, n: int, seed: int):
    """A :class:`mfbo.proposal.models.MondrianModel` (the optimizer's defaults) told ``n`` random
    observations one at a time, as in BO."""
    from mfbo.proposal.models import MondrianModel

    rng = np.random.default_rng(seed)
    U = rng.random((n, D))
    y = f(U)
    model = MondrianModel(D, np.random.SeedSequence(seed))
    for k in range(1, n + 1):
        model.observe(U[:k], y[:k], 1)
    return model


def scoring(configs=(("branin", 50), ("hartmann6", 200)), n_candidates: int = 250_000,
            repeats: int = 5, small_batch: int = 1_000, seed: int = 0) -> list[dict]:
    """Predict and UCB-score time over ``n_candidates`` random unit-cube points."""
    import numba

    from acquisitions import make_acquisition

    ucb = make_acquisition("ucb", kappa=1.0)
    rows = []
    for name, n in configs:
        problem, f = _unit_problem(name)
        D = len(problem.names)
        model = _bo_model(f, D, n, seed)
        forest = model.forest
        C = np.random.default_rng(seed + 1).random((n_candidates, D))
        small = C[:small_batch]
        _, predict_s = median_time(lambda: forest.predict(C, return_std=True), repeats)
        _, ucb_s = median_time(lambda: ucb(*model.predict(C)), repeats)
        _, small_s = median_time(lambda: forest.predict(small, return_std=True), 10 * repeats)
        T = forest.n_estimators
        rows.append({"problem": name, "D": D, "n_obs": n, "n_trees": T,
                     "n_candidates": n_candidates, "predict_s": predict_s, "ucb_s": ucb_s,
                     "point_trees_per_s": n_candidates * T / predict_s,
                     "small_batch": small_batch, "small_batch_s": small_s,
                     "small_point_trees_per_s": small_batch * T / small_s,
                     "mean_depth": float(forest.get_depth().mean()),
                     "numba_threads": numba.get_num_threads()})
        _progress(f"scoring D={D}: predict {predict_s:.3f} s, UCB {ucb_s:.3f} s")
    return rows


# -- memory, pickle, journal ------------------------------------------------------------------
_NODE_ARRAYS = ("inode", "fnode", "box", "stats")
_POINT_ARRAYS = ("X", "y")


def _forest_bytes(forest) -> dict:
    """Allocated and used bytes of the forest's arrays (``TreeStore``), nodes and points."""
    s = forest._store
    nodes = int(s.meta[:, 1].sum())
    n = s.n_points
    arrays = {k: getattr(s, k) for k in (*_NODE_ARRAYS, *_POINT_ARRAYS, "pnext", "meta", "rng")}
    allocated = sum(a.nbytes for a in arrays.values())
    used = (sum(arrays[k][0, 0].nbytes for k in _NODE_ARRAYS) * nodes
            + sum(arrays[k][0].nbytes for k in _POINT_ARRAYS) * n
            + arrays["pnext"][:, 0].nbytes * n + s.meta.nbytes + s.rng.nbytes)
    return {"nodes": nodes, "points": n, "allocated_bytes": allocated, "used_bytes": used}


def memory(sizes=(1_000, 10_000), dims=(2, 6), seed: int = 0, repeats: int = 3) -> list[dict]:
    """Bytes per node and per observation and pickle costs of online-grown forests."""
    from surrogates import MondrianForestRegressor

    rows = []
    for D in dims:
        for n in sizes:
            rng = np.random.default_rng(seed)
            X, y = rng.random((n, D)), rng.standard_normal(n)
            forest = MondrianForestRegressor(n_estimators=10, min_samples_split=2,
                                             feature_bounds=[[0.0, 1.0]] * D, random_state=seed)

            def grow():
                for i in range(n):
                    forest.partial_fit(X[i:i + 1], y[i:i + 1])

            _, grow_s = timed(grow)
            b = _forest_bytes(forest)
            blob = pickle.dumps(forest, protocol=pickle.HIGHEST_PROTOCOL)
            _, dump_s = median_time(
                lambda: pickle.dumps(forest, protocol=pickle.HIGHEST_PROTOCOL), repeats)
            _, load_s = median_time(lambda: pickle.loads(blob), repeats)
            Q = X[:100]
            same = bool(np.array_equal(pickle.loads(blob).predict(Q), forest.predict(Q)))
            rows.append({"D": D, "n_obs": n, **b, "grow_s": grow_s,
                         "bytes_per_node": b["allocated_bytes"] / b["nodes"],
                         "used_bytes_per_node": b["used_bytes"] / b["nodes"],
                         "bytes_per_obs": b["allocated_bytes"] / n,
                         "used_bytes_per_obs": b["used_bytes"] / n,
                         "pickle_bytes": len(blob), "pickle_s": dump_s, "unpickle_s": load_s,
                         "roundtrip_equal": same})
            _progress(f"memory D={D} n={n}: {b['allocated_bytes'] / 2**20:.1f} MiB, "
                      f"pickle {len(blob) / 2**20:.1f} MiB")
    return rows


def journal(problem: str = "branin", n: int = 10_000, seed: int = 0) -> dict:
    """Telling ``n`` evaluated configurations to an Optimizer (in memory and SQLite), the
    journal's size and the time to reload the study from it."""
    import mfbo

    p, _ = _unit_problem(problem)
    params, values = _random_params(p, n, seed)
    out = {"problem": p.name, "n_obs": n}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "study.db"
        for kind, storage in (("memory", None), ("sqlite", path)):
            opt = _mfbo_optimizer(p, seed, storage=storage)

            def tell_all():
                for x, v in zip(params, values):
                    opt.tell(x, float(v))

            _, out[f"tell_{kind}_s"] = timed(tell_all)
            opt.close()
            if storage is not None:
                opt.storage.close()
        out["file_bytes"] = sum(f.stat().st_size for f in Path(tmp).iterdir())

        def read_all():
            store = mfbo.SQLiteStorage(path)
            return store, store.read("default", 0)

        (store, events), out["read_s"] = timed(read_all)
        out["events"] = len(events)
        store.close()
        # timed once: the first opening of the stored study (replay + refit) is what is measured
        opt, out["reload_s"] = timed(lambda: _mfbo_optimizer(p, seed, storage=path))
        out["reloaded_trials"] = opt.n_trials
        opt.storage.close()
    _progress(f"journal: {n} tells {out['tell_sqlite_s']:.1f} s (SQLite), reload "
              f"{out['reload_s']:.2f} s")
    return out


# -- batch ask --------------------------------------------------------------------------------
def batch(problem: str = "branin", n_obs: int = 200, sizes=(8, 32, 128),
          strategies=("thompson", "constant_liar"), seed: int = 0) -> list[dict]:
    """Seconds of one ``Optimizer.ask(size)`` after ``n_obs`` observations (a fresh optimizer
    per batch; a first, untimed ``ask(2)`` per strategy loads the kernels)."""
    p, _ = _unit_problem(problem)
    params, values = _random_params(p, n_obs, seed)

    def timed_ask(strategy, size):
        opt = _mfbo_optimizer(p, seed, batch_strategy=strategy)
        for x, v in zip(params, values):
            opt.tell(x, float(v))
        trials, seconds = timed(lambda: opt.ask(size))  # once: an ask creates trials
        return len(trials), seconds

    rows = []
    for strategy in strategies:
        timed_ask(strategy, 2)
        for size in sizes:
            proposed, seconds = timed_ask(strategy, size)
            rows.append({"strategy": strategy, "size": size, "n_obs": n_obs,
                         "proposed": proposed, "seconds": seconds,
                         "per_point_s": seconds / max(1, proposed)})
            _progress(f"batch {strategy} x{size}: {seconds:.2f} s")
    return rows


# -- cold start -------------------------------------------------------------------------------
_COLD_START = """\
import json, time
t0 = time.perf_counter()
import mfbo
t1 = time.perf_counter()
opt = mfbo.Optimizer({"x1": (-5.0, 10.0), "x2": (0.0, 15.0)}, random_state=0)
f = lambda x1, x2: (x1 - 1.0) ** 2 + (x2 - 2.0) ** 2
while opt.n_trials < opt.n_initial:
    trial = opt.ask()
    opt.tell(trial, f(**trial.params))
t2 = time.perf_counter()
trial = opt.ask()
t3 = time.perf_counter()
model_based = trial.id >= opt.n_initial and opt.model.ready and opt.recipe.random_interleave == 0
print(json.dumps({"import_s": t1 - t0, "initial_design_s": t2 - t1, "proposal_s": t3 - t2,
                  "to_first_proposal_s": t3 - t0, "n_initial": opt.n_initial,
                  "model_based": bool(model_based)}))
"""


def _run_cold_start(env: dict) -> dict:
    proc, wall = timed(lambda: subprocess.run([sys.executable, "-c", _COLD_START], env=env,
                                              cwd=ROOT, capture_output=True, text=True,
                                              check=True))
    return {**json.loads(proc.stdout.strip().splitlines()[-1]), "process_wall_s": wall}


def coldstart(fresh_cache: bool = True) -> list[dict]:
    """The first model-based proposal of a 2-D study in a fresh process: with an empty numba
    cache, then with the cache it filled (``fresh_cache``); else once with the default cache
    (``__pycache__`` next to the sources, the quick mode)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if not fresh_cache:
        env.pop("NUMBA_CACHE_DIR", None)
        return [{"cache": "default", **_run_cold_start(env)}]
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        env["NUMBA_CACHE_DIR"] = cache
        for label in ("cold (empty NUMBA_CACHE_DIR)", "warm (same NUMBA_CACHE_DIR)"):
            r = _run_cold_start(env)
            files = [f for f in Path(cache).rglob("*") if f.is_file()]
            rows.append({"cache": label, **r,
                         "cache_files": len(files),
                         "cache_bytes": sum(f.stat().st_size for f in files)})
            _progress(f"coldstart {label}: {r['to_first_proposal_s']:.2f} s")
    return rows


# -- report -----------------------------------------------------------------------------------
def _ms(x) -> str:
    return "—" if x is None else (f"{x:.3g}" if x < 1000 else f"{x:.0f}")


def to_markdown(results: dict) -> str:
    """The markdown report of :func:`run`'s results."""
    env = results["environment"]
    lines = [f"# mfbo scaling ({env['date']})", "",
             f"{env['platform']}, {env['cpu_count']} CPUs, Python {env['python']}; numba "
             f"threads {env['numba_threads']}; load averages before {env['load_average']}, "
             f"after {env.get('load_after')}.", ""]
    if "overhead" in results:
        ov = results["overhead"]
        summary = summarize_overhead(ov)
        ns = table_n(ov["n_max"])
        lines += [f"## Overhead per ask+tell on {ov['problem']} (ms; median over steps "
                  f"n - n/10 < i <= n)", ""]
        rows = []
        for name, r in ov["methods"].items():
            cells = []
            for n in ns:
                st = summary[name]["at"][n]
                cells += ["—"] * 4 if st is None else [
                    _ms(st[k]) for k in ("ask_ms", "tell_ms", "total_ms", "total_mean_ms")]
            rows.append([r["label"], *cells])
        headers = ["method"] + [f"{h} n={n:,}" for n in ns
                                for h in ("ask", "tell", "ask+tell", "mean")]
        lines += [markdown_table(headers, rows), ""]
        rows = [[r["label"], f"{r['n']:,}", r["stopped"], f"{r['optimizer_s']:.0f}",
                 *(["—"] * 4 if last is None else [
                     _ms(last[k]) for k in ("ask_ms", "tell_ms", "total_ms", "total_mean_ms")])]
                for r, last in ((r, summary[k]["last"]) for k, r in ov["methods"].items())]
        lines += ["Where each method stopped (ms, over the last tenth of its steps):", "",
                  markdown_table(["method", "n", "stopped by", "optimizer s", "ask", "tell",
                                  "ask+tell", "mean"], rows), ""]
        rows = [[r["label"], *[("—" if summary[k]["at"][n] is None
                                 or "score_ms" not in summary[k]["at"][n] else
                                 f"{_ms(summary[k]['at'][n]['score_ms'])} / "
                                 f"{_ms(summary[k]['at'][n]['rest_ms'])}") for n in ns]]
                for k, r in ov["methods"].items() if r.get("score_s")]
        if rows:
            lines += ["Ask+tell split into candidate scoring (the surrogate's predictions "
                      "inside ask) / everything else (ms, medians):", "",
                      markdown_table(["method"] + [f"n={n:,}" for n in ns], rows), ""]
        if len(ns) >= 2:
            a, b = ns[-2], ns[-1]
            growth = [f"{r['label']} ×{st[b]['tell_ms'] / st[a]['tell_ms']:.2f}"
                      for r, st in ((r, summary[k]["at"]) for k, r in ov["methods"].items())
                      if st[b] and st[a]]
            if growth:
                lines += [f"Tell growth from n={a:,} to n={b:,}: " + ", ".join(growth)
                          + f" (log n: ×{np.log(b) / np.log(a):.2f}, linear: ×{b / a:g}).", ""]
    if "scoring" in results:
        rows = [[f"{r['problem']} (D={r['D']}, n={r['n_obs']})", f"{r['mean_depth']:.1f}",
                 f"{r['predict_s']:.3f}", f"{r['ucb_s']:.3f}",
                 f"{r['point_trees_per_s'] / 1e6:.1f}",
                 f"{r['small_batch_s'] * 1e3:.2f}", f"{r['small_point_trees_per_s'] / 1e6:.1f}"]
                for r in results["scoring"]]
        r0 = results["scoring"][0]
        lines += [f"## Candidate scoring ({r0['n_candidates']:,} candidates, "
                  f"{r0['n_trees']} trees; goal: UCB <= 0.25 s)", "",
                  markdown_table(["forest", "max depth (mean)", "predict+std (s)", "UCB (s)",
                                  "M point-trees/s",
                                  f"{r0['small_batch']:,} points (ms)", "M point-trees/s"],
                                 rows), ""]
    if "memory" in results:
        rows = [[r["D"], f"{r['n_obs']:,}", f"{r['nodes']:,}",
                 f"{r['allocated_bytes'] / 2**20:.2f}", f"{r['used_bytes'] / 2**20:.2f}",
                 f"{r['bytes_per_node']:.0f} / {r['used_bytes_per_node']:.0f}",
                 f"{r['bytes_per_obs']:.0f} / {r['used_bytes_per_obs']:.0f}",
                 f"{r['pickle_bytes'] / 2**20:.2f}", f"{r['pickle_s'] * 1e3:.1f}",
                 f"{r['unpickle_s'] * 1e3:.1f}", "yes" if r["roundtrip_equal"] else "NO"]
                for r in results["memory"]]
        lines += ["## Memory (10 trees, min_samples_split=2, grown one partial_fit at a time)", "",
                  markdown_table(["D", "observations", "nodes", "allocated MiB", "in use MiB",
                                  "bytes/node (alloc / use)", "bytes/obs (alloc / use)",
                                  "pickle MiB", "pickle ms", "unpickle ms",
                                  "same predictions"], rows), ""]
    if "journal" in results:
        j = results["journal"]
        n = j["n_obs"]
        lines += [f"## Journal: {n:,} evaluated configurations told to an Optimizer "
                  f"({j['problem']})", "",
                  markdown_table(["", "value"], [
                      ["tell, in-memory journal (ms per tell)",
                       f"{j['tell_memory_s'] / n * 1e3:.3f}"],
                      ["tell, SQLite journal (ms per tell)",
                       f"{j['tell_sqlite_s'] / n * 1e3:.3f}"],
                      ["SQLite file (MiB)", f"{j['file_bytes'] / 2**20:.2f}"],
                      ["read + parse all events (s)", f"{j['read_s']:.3f}"],
                      ["reload the study: Optimizer(storage=...) (s)", f"{j['reload_s']:.3f}"]]),
                  ""]
    if "batch" in results:
        rows = [[r["strategy"], r["size"], r["proposed"], f"{r['seconds']:.2f}",
                 f"{r['per_point_s'] * 1e3:.1f}"] for r in results["batch"]]
        lines += [f"## Batch ask at {results['batch'][0]['n_obs']} observations", "",
                  markdown_table(["batch_strategy", "n", "proposed", "s per batch",
                                  "ms per point"], rows), ""]
    if "coldstart" in results:
        rows = [[r["cache"], f"{r['import_s']:.2f}", f"{r['initial_design_s']:.2f}",
                 f"{r['proposal_s']:.2f}", f"{r['to_first_proposal_s']:.2f}",
                 f"{r['process_wall_s']:.2f}", "yes" if r["model_based"] else "NO",
                 r.get("cache_files", "")] for r in results["coldstart"]]
        lines += ["## Cold start: fresh process, import mfbo to the first model-based proposal "
                  "(2-D; goal warm <= 2 s)", "",
                  markdown_table(["numba cache", "import (s)", "initial design (s)",
                                  "first proposal (s)", "import to proposal (s)",
                                  "process wall (s)", "model-based", "cache files"], rows), ""]
    return "\n".join(lines)


# -- driver -----------------------------------------------------------------------------------
def run(out: str | os.PathLike = "results/scaling", parts=PARTS, n_max: int = 10_000,
        quick: bool = False, problem: str = "branin", methods=OVERHEAD_METHODS,
        budgets: dict | None = None, gp: str = "auto", seed: int = 0, argv=None) -> dict:
    """Run the ``parts`` and write ``results.json``, ``report.md`` and ``overhead.png``."""
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise ValueError(f"unknown part(s) {sorted(unknown)}; parts are {', '.join(PARTS)}.")
    _check_overhead_methods(methods)
    if n_max < 1:
        raise ValueError(f"n_max must be positive, got {n_max}.")
    if budgets is None and quick:
        budgets = {"*": 10.0}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = {"environment": environment(argv, packages=("scikit-optimize",)), "quick": quick}
    save_diff(results["environment"], out)  # uncommitted changes: keep what was measured
    if "overhead" in parts:
        results["overhead"] = overhead(problem, methods, n_max, budgets, seed, gp)
        plot_overhead(results["overhead"], out / "overhead.png")
        results["overhead"]["summary"] = summarize_overhead(results["overhead"])
    if "scoring" in parts:
        results["scoring"] = scoring(n_candidates=2_000 if quick else 250_000,
                                     repeats=2 if quick else 5, small_batch=200 if quick else 1_000,
                                     configs=(("branin", 20), ("hartmann6", 30)) if quick
                                     else (("branin", 50), ("hartmann6", 200)), seed=seed)
    if "memory" in parts:
        results["memory"] = memory(sizes=(100, 300) if quick else (1_000, 10_000), seed=seed)
        results["journal"] = journal(problem, n=50 if quick else 10_000, seed=seed)
    if "batch" in parts:
        results["batch"] = batch(problem, n_obs=20 if quick else 200,
                                 sizes=(2, 4) if quick else (8, 32, 128), seed=seed)
    if "coldstart" in parts:
        results["coldstart"] = coldstart(fresh_cache=not quick)
    results["environment"]["load_after"] = [round(x, 2) for x in os.getloadavg()]
    text = to_markdown(results)
    (out / "report.md").write_text(text + "\n", encoding="utf-8")
    (out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(text)
    return results


def _budgets(text: str) -> dict:
    """``"600"`` (every method) or ``"mondrian=900,rf-smac=300,gp=120"``."""
    text = text.strip()
    try:
        if "=" not in text:
            return {"*": float(text)}
        out = {k.strip(): float(v) for k, v in (item.split("=") for item in text.split(","))}
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected seconds or method=seconds,..., got {text!r}") from None
    try:
        _check_overhead_methods(out)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"in the time budget: {err}") from None
    return out


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``mfbo scale`` / ``python -m benchmarks.harness.scaling``."""
    default_budgets = ",".join(f"{k}={v:g}" for k, v in DEFAULT_BUDGETS.items())
    parser.add_argument("--out", default="results/scaling",
                        help="output directory (default: results/scaling)")
    parser.add_argument("--n-max", type=int, default=None,
                        help="evaluations of the overhead loop (default: 10000; --quick: 30)")
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes and 10 s budgets (seconds; for tests); cold start only "
                             "once, with the default numba cache")
    parser.add_argument("--only", default=",".join(PARTS),
                        help=f"comma-separated parts (default: all): {', '.join(PARTS)}")
    parser.add_argument("--problem", default="branin",
                        help="objective of the overhead loop, journal and batch parts "
                             "(default: branin; any of benchmarks.problems.problems, e.g. "
                             "hartmann6)")
    parser.add_argument("--methods", default=",".join(OVERHEAD_METHODS),
                        help="methods of the overhead loop: gp and any of mfbo's own methods "
                             "of mfbo bench, e.g. mondrian-empirical (default: "
                             "mondrian,rf-smac,gp)")
    parser.add_argument("--time-budget", type=_budgets, default=None,
                        help="optimizer seconds after which a method of the overhead loop stops: "
                             f"one number for all, or per method (default: {default_budgets}; "
                             f"other Mondrian variants as mondrian)")
    parser.add_argument("--gp", choices=("auto", "skopt", "sklearn"), default="auto",
                        help="GP baseline: scikit-optimize's if installed (auto), or "
                             "scikit-learn's GaussianProcessRegressor + EI")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def run_from_args(args: argparse.Namespace) -> None:
    """:func:`run` from parsed arguments (:class:`~benchmarks.harness.cli.CommandError` for a bad
    part, method or problem, or a missing GP package)."""
    n_max = args.n_max if args.n_max is not None else (30 if args.quick else 10_000)
    try:
        run(args.out, parts=[p.strip() for p in args.only.split(",") if p.strip()],
            n_max=n_max, quick=args.quick, problem=args.problem,
            methods=[m.strip() for m in args.methods.split(",") if m.strip()],
            budgets=args.time_budget, gp=args.gp, seed=args.seed, argv=sys.argv)
    except (ValueError, ImportError) as err:
        raise CommandError(str(err)) from err


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.harness.scaling``: the same as ``mfbo scale``."""
    return command_main(sys.modules[__name__], argv)


if __name__ == "__main__":
    sys.exit(main())
