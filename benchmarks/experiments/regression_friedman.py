"""Regression benchmark: Mondrian forests against scikit-learn's (and river's) forests.

Run ``python -m benchmarks.experiments.regression_friedman [--out DIR] [--quick]``.  In one run it
prints
(as markdown, also written to ``DIR/report.md``; all numbers go to ``DIR/results.json``):

a) Friedman-1 (20,000 train / 5,000 test, noise 1, 10 trees everywhere): batch fit and predict
   times, RMSE, NLPD and 90 % interval coverage of the Mondrian forest (empirical and BP
   posteriors, with and without mutual-information feature weights), random forest and extra
   trees (predictive std = std of the per-tree predictions, Hutter, 2009) and river's AMF;
   Mondrian one-point-at-a-time ``partial_fit`` throughput and cold-start time.
b) Calibration as in Lakshminarayanan et al., 2016 (AISTATS), Table 2: observed minus
   nominal coverage of the central Gaussian intervals, on Friedman-1 and cpu_act.
c) ``DIR/gap_toy.png``: a 1-D toy with a gap in the data, showing the predictive std of each
   forest in the gap and beyond the data.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Sequence

import numba
import numpy as np
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

from benchmarks.harness.calibration import (CALIBRATION_TOL, STD_FLOOR, Z_LEVELS, calibration,
                                    gaussian_nlpd, interval_coverage, is_calibrated)
from benchmarks.harness.environment import environment
from benchmarks.harness.figures import figure, save
from benchmarks.harness.progress import progress
from benchmarks.harness.tables import markdown_table
from benchmarks.harness.timing import median_time, timed
from benchmarks.problems.regression_data import (FULL, QUICK, SEED, Sizes, Split, cpu_act_split,
                                        friedman_split)
from surrogates import MondrianForestRegressor, rmse

N_TREES = 10
#: timed calls of a fit, a repeated prediction and a ``partial_fit`` stream
REPEATS = 3


# -- methods -----------------------------------------------------------------------------------
def _mondrian(posterior: str, feature_weights: str | None = None,
              **params: Any) -> Callable[[], MondrianForestRegressor]:
    def make() -> MondrianForestRegressor:
        return MondrianForestRegressor(n_estimators=N_TREES, posterior=posterior,
                                       feature_weights=feature_weights, random_state=SEED,
                                       **params)
    return make


METHODS: dict[str, Callable[[], Any]] = {
    "Mondrian empirical": _mondrian("empirical"),
    "Mondrian bp": _mondrian("bp"),
    "Mondrian empirical + MI": _mondrian("empirical", "mutual_info"),
    "Mondrian bp + MI": _mondrian("bp", "mutual_info"),
    "RF": lambda: RandomForestRegressor(n_estimators=N_TREES, random_state=SEED),
    "ET": lambda: ExtraTreesRegressor(n_estimators=N_TREES, random_state=SEED),
}
MONDRIAN_METHODS = [name for name in METHODS if name.startswith("Mondrian")]


def predict_mean_std(model: Any, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Predictive mean and std: the Mondrian predictive, or mean/std over a forest's trees."""
    if isinstance(model, MondrianForestRegressor):
        return model.predict(X, return_std=True)
    per_tree = np.stack([tree.predict(X) for tree in model.estimators_])
    return per_tree.mean(axis=0), per_tree.std(axis=0)


# -- experiments -------------------------------------------------------------------------------
def evaluate(make: Callable[[], Any], split: Split) -> dict[str, Any]:
    """Fit a fresh model on the training part, and score its predictive on the test part."""
    model, fit_s = median_time(lambda: make().fit(split.X_train, split.y_train), REPEATS)
    # the first prediction is timed on its own: BP computes its messages on the first
    # prediction after the data changed; it is also the warm-up of the repeated ones
    (mean, std), predict_s = timed(lambda: predict_mean_std(model, split.X_test))
    _, repeat_s = median_time(lambda: predict_mean_std(model, split.X_test), REPEATS,
                              warmup=0)
    y = split.y_test
    if isinstance(model, MondrianForestRegressor):
        nlpd = model.nlpd(split.X_test, y)  # the exact mixture density
    else:
        nlpd = gaussian_nlpd(y, mean, std)
    return {"fit_s": fit_s, "predict_s": predict_s, "predict_again_s": repeat_s,
            "rmse": rmse(y, mean), "nlpd": nlpd,
            "nlpd_gaussian": gaussian_nlpd(y, mean, std),
            "coverage90": interval_coverage(y, mean, std, 0.9),
            "calibration": calibration(y, mean, std),
            "n_std_floored": int(np.sum(std < STD_FLOOR))}


def evaluate_all(split: Split, label: str) -> dict[str, dict[str, Any]]:
    """:func:`evaluate` every method of :data:`METHODS` on one split."""
    results = {}
    for name, make in METHODS.items():
        _progress(f"{label}: {name}")
        results[name] = evaluate(make, split)
    return results


def evaluate_river_amf(split: Split, n_rows: int) -> dict[str, Any] | None:
    """River's AMFRegressor trained online on the first ``n_rows`` training rows only."""
    try:
        from river.forest import AMFRegressor
    except ImportError:
        return None
    _progress(f"river AMF on {n_rows} rows")
    model = AMFRegressor(n_estimators=N_TREES, seed=SEED)
    train = [dict(enumerate(x.tolist())) for x in split.X_train[:n_rows]]
    test = [dict(enumerate(x.tolist())) for x in split.X_test]

    def learn() -> None:
        for x, y in zip(train, split.y_train[:n_rows].tolist()):
            model.learn_one(x, y)

    # one pass each, as a stream sees them (``learn_one`` changes the model)
    _, learn_s = timed(learn)
    pred, predict_s = timed(lambda: np.array([model.predict_one(x) for x in test]))
    return {"n_train": n_rows, "learn_s": learn_s, "points_per_s": n_rows / learn_s,
            "predict_s": predict_s, "rmse": rmse(split.y_test, pred)}


def warm_up() -> None:
    """Compile (or load) every numba kernel the benchmark uses, outside the timings."""
    rng = np.random.default_rng(1)
    X, y = rng.random((60, 10)), rng.random(60)
    for posterior in ("empirical", "bp"):
        for first in (1, 40):  # online from a single point, and from a batch
            model = MondrianForestRegressor(posterior=posterior, min_samples_split=2,
                                            random_state=SEED).fit(X[:first], y[:first])
            for i in range(first, 60):
                model.partial_fit(X[i:i + 1], y[i:i + 1])
            model.predict(X, return_std=True)
            model.nlpd(X, y)


def online_throughput(X: np.ndarray, y: np.ndarray, n_threads: int | None = None,
                      repeats: int = REPEATS, **params: Any) -> float:
    """Points per second of one-at-a-time ``partial_fit`` on a fresh model (the median time of
    ``repeats`` runs after a warm-up, each on a new model).

    ``n_threads`` temporarily limits numba's threads (``None``: leave as is).
    """
    def run() -> None:
        model = MondrianForestRegressor(n_estimators=N_TREES, random_state=SEED, **params)
        for i in range(X.shape[0]):
            model.partial_fit(X[i:i + 1], y[i:i + 1])

    before = numba.get_num_threads()
    numba.set_num_threads(n_threads or before)
    try:
        return X.shape[0] / median_time(run, repeats)[1]
    finally:
        numba.set_num_threads(before)


_COLD_START = """
import time
import numpy as np
rng = np.random.default_rng(0)
X, y = rng.random((100, 10)), rng.random(100)
start = time.perf_counter()
import surrogates
model = surrogates.MondrianForestRegressor(random_state=0).fit(X, y)
model.predict(X, return_std=True)
print(time.perf_counter() - start)
"""


def cold_start_seconds(fresh_numba_cache: bool) -> float:
    """Import + fit on 100 rows + predict, timed inside a fresh interpreter.

    With ``fresh_numba_cache`` the child gets an empty numba cache directory, so it compiles
    every kernel (a first-ever run); otherwise it loads them from the on-disk cache.
    """
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, **({"NUMBA_CACHE_DIR": cache} if fresh_numba_cache else {}))
        out = subprocess.run([sys.executable, "-c", _COLD_START], env=env, check=True,
                             capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def online_benchmark(split: Split, n_rows: int) -> dict[str, Any]:
    """One-at-a-time ``partial_fit`` throughput and cold-start times of the Mondrian forest."""
    _progress("online partial_fit and cold start")
    X, y = split.X_train[:n_rows], split.y_train[:n_rows]
    return {"n_points": n_rows,
            "points_per_s": online_throughput(X, y),
            "points_per_s_min_samples_split_2": online_throughput(X, y, min_samples_split=2),
            "points_per_s_1_numba_thread": online_throughput(X, y, n_threads=1),
            "cold_start_s_cached": cold_start_seconds(fresh_numba_cache=False),
            "cold_start_s_compile": cold_start_seconds(fresh_numba_cache=True)}


def speed_ratios(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Each Mondrian variant's fit time over ET's and predict time over RF's."""
    et_fit, rf_predict = results["ET"]["fit_s"], results["RF"]["predict_again_s"]
    return {name: {"fit_over_et_fit": results[name]["fit_s"] / et_fit,
                   "predict_over_rf_predict": results[name]["predict_s"] / rf_predict,
                   "predict_again_over_rf_predict": results[name]["predict_again_s"] / rf_predict}
            for name in MONDRIAN_METHODS}


# -- gap toy -----------------------------------------------------------------------------------
TOY_GAP = (1.0, 2.0)
TOY_DATA = (0.0, 3.0)


def gap_toy_split(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``x`` uniform on [0, 1] u [2, 3], ``y = sin(3x) + 0.1 noise``, test grid on [-1, 4]."""
    rng = np.random.default_rng(SEED)
    x = rng.random(n) + 2.0 * rng.integers(0, 2, n)
    y = np.sin(3 * x) + 0.1 * rng.standard_normal(n)
    grid = np.linspace(-1.0, 4.0, 501)
    return x[:, None], y, grid[:, None]


def gap_toy_predictions(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                         dict[str, tuple[np.ndarray, np.ndarray]]]:
    """Training data, grid and each model's (mean, std) on the grid."""
    X, y, grid = gap_toy_split(n)
    mondrian = _mondrian("empirical", min_samples_split=2)().fit(X, y)
    preds = {"Mondrian empirical": predict_mean_std(mondrian, grid)}
    mondrian.set_params(posterior="bp")  # same trees, exact BP posterior
    preds["Mondrian bp"] = predict_mean_std(mondrian, grid)
    for name in ("RF", "ET"):
        preds[name] = predict_mean_std(METHODS[name]().fit(X, y), grid)
    return X[:, 0], y, grid[:, 0], preds


def toy_regions(grid: np.ndarray) -> dict[str, np.ndarray]:
    """Masks of the grid points in the data, in the gap, and beyond the data."""
    in_gap = (grid > TOY_GAP[0]) & (grid < TOY_GAP[1])
    outside = (grid < TOY_DATA[0]) | (grid > TOY_DATA[1])
    return {"data": ~in_gap & ~outside, "gap": in_gap, "beyond": outside}


def plot_gap_toy(path: Path, x: np.ndarray, y: np.ndarray, grid: np.ndarray,
                 preds: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    """Three panels (Mondrian empirical + bp, RF, ET): mean -/+ 2 std, data, shaded gap."""
    fig, axes = figure(15, 4.5, 1, 3, sharey=True)
    panels = [("Mondrian forest (min_samples_split=2)", ["Mondrian empirical", "Mondrian bp"]),
              ("Random forest (per-tree std)", ["RF"]),
              ("Extra trees (per-tree std)", ["ET"])]
    colours = ["tab:blue", "tab:orange"]
    for ax, (title, names) in zip(axes, panels):
        ax.axvspan(*TOY_GAP, color="0.9", label="gap in the data")
        for name, colour in zip(names, colours):
            mean, std = preds[name]
            ax.fill_between(grid, mean - 2 * std, mean + 2 * std, color=colour, alpha=0.25,
                            label=f"{name}: mean -/+ 2 std")
            ax.plot(grid, mean, color=colour, lw=1.5)
        ax.plot(x, y, "k.", ms=3, label="training points")
        ax.plot(grid, np.sin(3 * grid), "k--", lw=0.8, label="sin(3x)")
        ax.set_title(f"{title}, {N_TREES} trees")
        ax.set_xlabel("x")
        ax.set_xlim(grid[0], grid[-1])
        ax.legend(loc="lower left", fontsize=7)
    axes[0].set_ylabel("y")
    save(fig, path)


def gap_toy(out: Path, n: int) -> dict[str, dict[str, float]]:
    """Draw ``gap_toy.png``; return each model's mean predictive std per region."""
    _progress("gap toy")
    x, y, grid, preds = gap_toy_predictions(n)
    plot_gap_toy(out / "gap_toy.png", x, y, grid, preds)
    masks = toy_regions(grid)
    return {name: {region: float(std[mask].mean()) for region, mask in masks.items()}
            for name, (_, std) in preds.items()}


# -- reporting ---------------------------------------------------------------------------------
def _progress(message: str) -> None:
    progress("regression_friedman", message)


def metrics_table(results: dict[str, dict[str, Any]]) -> str:
    """Fit/predict times and predictive scores, one row per method."""
    headers = ["method", "fit (s)", "predict (s)", "predict again (s)", "RMSE", "NLPD",
               "NLPD (Gaussian)", "90% coverage", f"std < {STD_FLOOR:g} (#)"]
    rows = [[name, f"{r['fit_s']:.3f}", f"{r['predict_s']:.3f}", f"{r['predict_again_s']:.3f}",
             f"{r['rmse']:.4f}",
             f"{r['nlpd']:.4f}", f"{r['nlpd_gaussian']:.4f}", f"{r['coverage90']:.3f}",
             r["n_std_floored"]] for name, r in results.items()]
    return markdown_table(headers, rows)


def calibration_table(results: dict[str, dict[str, Any]]) -> str:
    """Observed minus nominal coverage per level, one row per method."""
    headers = (["method"] + [f"z={z:.1f}" for z in Z_LEVELS]
               + ["max abs", f"all within ±{CALIBRATION_TOL}"])
    rows = [[name] + [f"{e:+.2f}" for e in r["calibration"]]
            + [f"{max(abs(e) for e in r['calibration']):.3f}"]
            + ["yes" if is_calibrated(r["calibration"]) else "no"]
            for name, r in results.items()]
    return markdown_table(headers, rows)


def river_table(river: dict[str, Any] | None) -> str:
    """River AMF's online learning speed and RMSE (trained on fewer rows)."""
    if river is None:
        return "river is not installed: AMFRegressor skipped."
    n = river["n_train"]
    return markdown_table(
        [f"method (trained on the first {n:,} train rows only)", "learn_one (points/s)",
         "learn_one total (s)", "predict_one, test set (s)", f"RMSE (after {n:,} rows)"],
        [["river AMFRegressor", f"{river['points_per_s']:.1f}", f"{river['learn_s']:.2f}",
          f"{river['predict_s']:.2f}", f"{river['rmse']:.4f}"]])


def online_table(online: dict[str, Any]) -> str:
    """Mondrian one-at-a-time partial_fit throughput and cold start."""
    n = online["n_points"]
    return markdown_table(["Mondrian forest (default params, 10 trees)", "value"], [
        [f"partial_fit one point at a time, first {n:,} rows (points/s, median of "
         f"{REPEATS} fresh models)",
         f"{online['points_per_s']:.1f}"],
        ["same with min_samples_split=2 (points/s)",
         f"{online['points_per_s_min_samples_split_2']:.1f}"],
        ["same as the first row, numba limited to 1 thread (points/s)",
         f"{online['points_per_s_1_numba_thread']:.1f}"],
        ["cold start: import + fit 100 rows + predict, fresh process, numba disk cache (s)",
         f"{online['cold_start_s_cached']:.2f}"],
        ["cold start as above, empty numba cache: compiles everything (s)",
         f"{online['cold_start_s_compile']:.2f}"]])


def ratio_table(ratios: dict[str, dict[str, float]]) -> str:
    """Mondrian fit time over ET's, predict time over RF's."""
    return markdown_table(["method", "fit time / ET fit time",
                           "first predict / RF predict", "predict again / RF predict"],
                          [[name, f"{r['fit_over_et_fit']:.2f}",
                            f"{r['predict_over_rf_predict']:.2f}",
                            f"{r['predict_again_over_rf_predict']:.2f}"]
                           for name, r in ratios.items()])


def toy_table(stds: dict[str, dict[str, float]]) -> str:
    """Mean predictive std of each model in the data, the gap, and beyond the data."""
    return markdown_table(["method", "mean std in the data", "in the gap (1, 2)",
                           "beyond the data (x<0 or x>3)"],
                          [[name, f"{s['data']:.3f}", f"{s['gap']:.3f}", f"{s['beyond']:.3f}"]
                           for name, s in stds.items()])


def run_environment() -> dict[str, Any]:
    """The environment record (:func:`benchmarks.harness.environment.environment`, river's version
    too) and the Mondrian forest's default parameters."""
    return {**environment(packages=("river",)),
            "mondrian_defaults": {k: repr(v) for k, v in
                                  MondrianForestRegressor().get_params().items()}}


def build_report(sizes: Sizes, res: dict[str, Any]) -> str:
    """The whole report as markdown."""
    fr, cpu, env = res["friedman1"], res["cpu_act"], res["environment"]
    s = sizes
    return "\n\n".join([
        "# Regression benchmark: Mondrian forests vs scikit-learn and river forests",
        f"{N_TREES} trees everywhere; RF/ET predictive std = std of the per-tree predictions "
        f"(Hutter, 2009), n_jobs=1; Mondrian's numba kernels use {env['numba_threads']} "
        f"thread(s) on {env['cpu_count']} CPU(s) (1-min load average at start: "
        f"{env['load_average'][0]:.2f}; other load inflates the timings, above all "
        f"the one-point partial_fit calls). Fit and repeated-predict times are medians of "
        f"{REPEATS} calls after a warm-up. Mondrian NLPD is the exact mixture density "
        f"(`model.nlpd`); 'NLPD (Gaussian)' uses the predictive mean and std for every method. "
        f"A std below {STD_FLOOR:g} (all trees agree, e.g. on rows duplicated between train and "
        f"test) is floored to it: each such point adds about -19.8 to the summed log loss when "
        f"the prediction is exact and about 5e17 per unit squared error when it is not, so a "
        f"Gaussian NLPD with a nonzero count in the last column is not meaningful.",
        f"## a) Friedman-1 (noise 1): {s.n_train:,} train / {s.n_test:,} test",
        metrics_table(fr["methods"]),
        river_table(fr["river_amf"]),
        online_table(fr["online"]),
        "Speed ratios:\n\n" + ratio_table(fr["ratios"]),
        "## b) Calibration: observed minus nominal coverage of the central z Gaussian interval",
        f"### Friedman-1 ({s.n_train:,} train / {s.n_test:,} test)",
        calibration_table(fr["methods"]),
        f"### cpu_act ({s.cpu_train:,} train / {s.cpu_test:,} test, permutation seed {SEED})",
        calibration_table(cpu["methods"]),
        metrics_table(cpu["methods"]),
        "## c) Gap toy (gap_toy.png): mean predictive std by region",
        toy_table(res["gap_toy"]),
    ]) + "\n"


# -- main --------------------------------------------------------------------------------------
def run(sizes: Sizes, out: Path) -> dict[str, Any]:
    """Run every experiment; return all the numbers."""
    env = run_environment()
    warm_up()
    friedman = friedman_split(sizes)
    methods = evaluate_all(friedman, "Friedman-1")
    results = {
        "sizes": asdict(sizes),
        "environment": env,
        "friedman1": {"methods": methods,
                      "river_amf": evaluate_river_amf(friedman, sizes.n_river),
                      "online": online_benchmark(friedman, sizes.n_online),
                      "ratios": speed_ratios(methods)},
        "cpu_act": {"methods": evaluate_all(cpu_act_split(sizes), "cpu_act")},
        "gap_toy": gap_toy(out, sizes.n_toy),
        "z_levels": list(Z_LEVELS),
    }
    return results


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/regression"),
                        help="output directory (default: results/regression)")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, for a smoke test")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    args.out.mkdir(parents=True, exist_ok=True)
    results = run(sizes, args.out)
    report = build_report(sizes, results)
    print(report, end="")
    (args.out / "report.md").write_text(report)
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    _progress(f"wrote {args.out / 'report.md'}, results.json and gap_toy.png")


if __name__ == "__main__":
    main()
