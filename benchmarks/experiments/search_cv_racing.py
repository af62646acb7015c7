"""Cross-validation racing in ``MondrianSearchCV``: the held-out score of the refit best model
and the number of fits, with and without ``racing=True``, on the same seeds.

Each run splits a data set 75/25 (the seed's split), searches on the 75 with ``cv`` folds and
scores the refit best model on the 25.  The data sets follow the split of the
``sklearn-tune`` suite (:mod:`benchmarks.problems.sklearn_tune`) among the data sets scikit-learn
ships: dev is breast cancer, iris (SVM and logistic regression) and diabetes (SVR); test is
digits and wine.  Tune the racing rule and ``racing_z`` on dev, report on test.

Run: ``python -m benchmarks.experiments.search_cv_racing --split test --seeds 10``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import wilcoxon
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_iris, load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR

from benchmarks.problems.sklearn_tune import DEV_DATASETS, TEST_DATASETS
from mfbo import MondrianSearchCV, Real

LOADERS = {"breast_cancer": load_breast_cancer, "iris": load_iris, "diabetes": load_diabetes,
           "digits": load_digits, "wine": load_wine}

SVM = {"svc__C": Real(1e-3, 1e3, log=True), "svc__gamma": Real(1e-5, 1e1, log=True)}
#: (data set, model name) -> (estimator, search space)
PROBLEMS = {
    "svm": lambda task: (make_pipeline(StandardScaler(), SVC() if task == "classification"
                                       else SVR()),
                         SVM if task == "classification"
                         else {k.replace("svc", "svr"): v for k, v in SVM.items()}),
    "logistic": lambda task: (make_pipeline(StandardScaler(), LogisticRegression(max_iter=300)),
                              {"logisticregression__C": Real(1e-4, 1e3, log=True)}),
}


def problems(split: str) -> list[tuple[str, str]]:
    names = DEV_DATASETS if split == "dev" else TEST_DATASETS
    out = []
    for data in names:
        if data not in LOADERS:
            continue  # (the suites' downloaded data sets are left out: small and offline)
        out.append((data, "svm"))
        if data != "diabetes":
            out.append((data, "logistic"))
    return out


def run(data: str, model: str, seed: int, racing: bool, z: float, n_iter: int,
        cv: int) -> tuple[float, int]:
    """The held-out score of the refit best model and the number of fits of one search."""
    X, y = LOADERS[data](return_X_y=True)
    task = "regression" if data == "diabetes" else "classification"
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed)
    estimator, space = PROBLEMS[model](task)
    search = MondrianSearchCV(estimator, space, n_iter=n_iter, cv=cv, random_state=seed,
                              racing=racing, racing_z=z).fit(X_tr, y_tr)
    r = search.cv_results_
    fits = int(r["n_splits_run"].sum()) if racing else len(r["params"]) * cv
    return float(search.score(X_te, y_te)), fits


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--z", type=float, nargs="+", default=[0.0])
    parser.add_argument("--n-iter", type=int, default=25)
    parser.add_argument("--cv", type=int, default=5)
    args = parser.parse_args(argv)
    start = time.time()
    print(f"split={args.split} seeds={args.seeds} n_iter={args.n_iter} cv={args.cv}")
    print("| problem | racing_z | held-out without | held-out with | mean diff | worst diff "
          "| Wilcoxon p | fits ratio (mean, median, max) |")
    print("|---|---|---|---|---|---|---|---|")
    ratios = {z: [] for z in args.z}
    diffs = {z: [] for z in args.z}
    for data, model in problems(args.split):
        plain = [run(data, model, s, False, 1.0, args.n_iter, args.cv)
                 for s in range(args.seeds)]
        for z in args.z:
            raced = [run(data, model, s, True, z, args.n_iter, args.cv)
                     for s in range(args.seeds)]
            a = np.array([p[0] for p in plain])
            b = np.array([r[0] for r in raced])
            ratio = np.array([r[1] / p[1] for p, r in zip(plain, raced)])
            d = b - a
            p = wilcoxon(b, a).pvalue if np.any(d != 0) else 1.0
            ratios[z] += list(ratio)
            diffs[z] += list(d)
            print(f"| {data}/{model} | {z} | {a.mean():.4f} | {b.mean():.4f} | {d.mean():+.4f} "
                  f"| {d.min():+.4f} | {p:.3f} | {ratio.mean():.2f}, {np.median(ratio):.2f}, "
                  f"{ratio.max():.2f} |",
                  flush=True)
    for z in args.z:
        d = np.array(diffs[z])
        p = wilcoxon(d).pvalue if np.any(d != 0) else 1.0
        print(f"all problems, racing_z={z}: mean held-out diff {d.mean():+.4f} (worst "
              f"{d.min():+.4f}, Wilcoxon p={p:.3f}), fits ratio mean "
              f"{np.mean(ratios[z]):.2f} (median {np.median(ratios[z]):.2f}, max "
              f"{np.max(ratios[z]):.2f})")
    print(f"[{time.time() - start:.0f} s]")


if __name__ == "__main__":
    main()
