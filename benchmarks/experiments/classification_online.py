"""Online classification (Lakshminarayanan, 2016 (thesis), ch. 5): a Mondrian forest updated
online against batch forests re-trained on all data so far.

Run ``python -m benchmarks.experiments.classification_online [--dataset letter|digits]
[--batches N] [--out DIR]``.

Protocol (Lakshminarayanan, 2016 (thesis), Section 5.7): UCI letter, the first 15,000 rows train
and the last 5,000 test, min-max scaled on the training part, 100 trees everywhere. The permuted
training data arrive in ``--batches`` mini-batches; after each, the Mondrian forest is updated
with ``partial_fit`` and scikit-learn's ExtraTreesClassifier with ``max_features=1`` (ERT-1) and
with defaults (ERT), and RandomForestClassifier (RF), are re-trained on everything seen so far.
Writes test accuracy against the fraction of data and against cumulative training time
(``accuracy_vs_fraction.png``, ``accuracy_vs_time.png``), ``results.json`` and ``report.md``,
with the Mondrian trees' data-weighted leaf depth (the thesis's Table 5.1: letter 23.2 +/- 1.8),
one-point ``partial_fit`` throughput and test-set prediction time against RF.
``--dataset digits`` runs the same protocol on scikit-learn's bundled digits (for CI).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from sklearn.datasets import load_digits
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

from benchmarks.harness.environment import environment
from benchmarks.harness.figures import figure, save
from benchmarks.harness.tables import markdown_table
from benchmarks.harness.timing import median_time, timed
from benchmarks.problems.data import read_table
from surrogates import MondrianForestClassifier

N_TREES = 100
SEED = 0
BATCH_METHODS: dict[str, Callable[[], Any]] = {
    "ERT-1": lambda: ExtraTreesClassifier(N_TREES, max_features=1, random_state=SEED),
    "ERT": lambda: ExtraTreesClassifier(N_TREES, random_state=SEED),
    "RF": lambda: RandomForestClassifier(N_TREES, random_state=SEED),
}


def load_letter(data_home=None):
    """UCI letter: first 15,000 rows train, last 5,000 test (the thesis's split)."""
    frame = read_table("letter-recognition.data", data_home)
    y = frame.iloc[:, 0].to_numpy()
    X = frame.iloc[:, 1:].to_numpy(dtype=np.float64)
    return X[:15000], y[:15000], X[15000:], y[15000:]


def load_digits_split():
    """scikit-learn's digits: the first 70 % of the rows train, the rest test."""
    X, y = load_digits(return_X_y=True)
    n = int(0.7 * len(X))
    return X[:n].astype(float), y[:n], X[n:].astype(float), y[n:]


def minmax(X_train, X_test):
    """Both parts scaled to [0, 1] by the training part's range (a constant column stays)."""
    lo = X_train.min(axis=0)
    span = X_train.max(axis=0) - lo
    span[span <= 0] = 1.0
    return (X_train - lo) / span, (X_test - lo) / span


def run_stream(X, y, Xt, yt, n_batches: int) -> dict[str, Any]:
    """Accuracy curves of all methods over the mini-batch stream."""
    order = np.random.default_rng(SEED).permutation(len(X))
    X, y = X[order], y[order]
    cuts = np.linspace(0, len(X), n_batches + 1).astype(int)[1:]
    classes = np.unique(y)
    mf = MondrianForestClassifier(N_TREES, feature_bounds=np.c_[np.zeros(X.shape[1]),
                                                                np.ones(X.shape[1])],
                                  random_state=SEED)
    curves = {name: {"accuracy": [], "time_s": []} for name in ["Mondrian"] + list(BATCH_METHODS)}
    spent = dict.fromkeys(curves, 0.0)
    start = 0
    for end in cuts:
        _, dt = timed(lambda: mf.partial_fit(X[start:end], y[start:end], classes=classes))
        spent["Mondrian"] += dt
        curves["Mondrian"]["accuracy"].append(float(mf.score(Xt, yt)))
        for name, make in BATCH_METHODS.items():
            model, dt = timed(lambda: make().fit(X[:end], y[:end]))
            spent[name] += dt
            curves[name]["accuracy"].append(float(model.score(Xt, yt)))
        for name in curves:
            curves[name]["time_s"].append(spent[name])
        start = end
    fraction = (cuts / len(X)).tolist()
    depth = mf.get_weighted_depth()
    return {"fraction": fraction, "curves": curves, "final_model": mf,
            "depth_mean": float(depth.mean()), "depth_sd": float(depth.std()),
            "last_batch_model": model}


def online_throughput(X, y, n=2000, repeats: int = 3) -> float:
    """Points per second of ``partial_fit`` one point at a time over the first ``n`` rows, on a
    fresh forest (median time of ``repeats`` fresh forests after a warm-up)."""
    classes = np.unique(y)
    bounds = np.c_[np.zeros(X.shape[1]), np.ones(X.shape[1])]

    def run() -> None:
        mf = MondrianForestClassifier(N_TREES, feature_bounds=bounds, random_state=SEED)
        mf.partial_fit(X[:1], y[:1], classes=classes)  # the classes come with the first point
        for i in range(1, n):
            mf.partial_fit(X[i:i + 1], y[i:i + 1])

    return n / median_time(run, repeats)[1]


def prediction_times(mf, X, y, Xt) -> dict[str, float]:
    """Seconds of ``predict_proba`` on the test set: the Mondrian forest against a random forest
    fitted on the same data (medians after a warm-up)."""
    rf = RandomForestClassifier(N_TREES, random_state=SEED).fit(X, y)
    return {"mondrian_predict_proba_s": median_time(lambda: mf.predict_proba(Xt))[1],
            "rf_predict_proba_s": median_time(lambda: rf.predict_proba(Xt))[1]}


def plot(res, out: Path, title: str) -> None:
    """Test accuracy against the fraction of data seen and against cumulative training time."""
    for key, xlabel, fname, logx in [
            ("fraction", "fraction of training data", "accuracy_vs_fraction.png", False),
            ("time_s", "cumulative training time (s)", "accuracy_vs_time.png", True)]:
        fig, ax = figure(6, 4.5)
        for name, c in res["curves"].items():
            x = res["fraction"] if key == "fraction" else c["time_s"]
            ax.plot(x, c["accuracy"], label=name, marker="." if len(x) < 30 else None)
        if logx:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("test accuracy")
        ax.set_title(title)
        ax.legend()
        ax.grid(alpha=0.3)
        save(fig, out / fname)


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=["letter", "digits"], default="letter")
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or Path("results") / f"classification_{args.dataset}"
    out.mkdir(parents=True, exist_ok=True)
    env = environment(argv)
    X, y, Xt, yt = load_letter() if args.dataset == "letter" else load_digits_split()
    X, Xt = minmax(X, Xt)
    MondrianForestClassifier(2, random_state=0).fit(X[:50], y[:50]).predict_proba(Xt[:5])  # compile
    res = run_stream(X, y, Xt, yt, args.batches)
    mf = res.pop("final_model")
    res.pop("last_batch_model")
    res["partial_fit_points_per_s"] = online_throughput(X, y, min(2000, len(X)))
    res.update(prediction_times(mf, X, y, Xt))
    res["dataset"] = args.dataset
    res["environment"] = env
    plot(res, out, f"{args.dataset}: {len(X)} train / {len(Xt)} test, {N_TREES} trees")
    rows = [[name, f"{c['accuracy'][-1]:.4f}", f"{c['time_s'][-1]:.2f}"]
            for name, c in res["curves"].items()]
    ratio = res["curves"]["Mondrian"]["time_s"][-1] / res["curves"]["ERT-1"]["time_s"][-1]
    report = "\n".join([
        f"# Online classification, {args.dataset} ({len(X)} train / {len(Xt)} test, "
        f"{args.batches} mini-batches, {N_TREES} trees)", "",
        markdown_table(["method", "final test accuracy", "total training time (s)"], rows), "",
        f"Mondrian total online time / ERT-1 total re-training time: {ratio:.3f}", "",
        f"Mondrian data-weighted leaf depth: {res['depth_mean']:.1f} +/- {res['depth_sd']:.1f}",
        f"Mondrian partial_fit one point at a time: {res['partial_fit_points_per_s']:.0f} "
        f"points/s (median of 3 fresh forests)",
        f"predict_proba of the test set (median of 5 after a warm-up): Mondrian "
        f"{res['mondrian_predict_proba_s']:.3f} s, RF {res['rf_predict_proba_s']:.3f} s", ""])
    print(report)
    (out / "report.md").write_text(report)
    (out / "results.json").write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
