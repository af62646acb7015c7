"""Fingerprints of what the code computes: hashes of BO runs (every recipe, mixed, discrete,
many-combination categorical and conditional spaces, batches, ``min_distance``, a resumed
SQLite study, the search CV, the Optuna sampler), of every exported estimator's predictions
and of the lifetime paths and grid exploration.

A restructuring that must not change a number is checked by two runs, before and after:

    python -m benchmarks.harness.fingerprint before.json      # on the old checkout
    python -m benchmarks.harness.fingerprint after.json       # on the new one
    python -m benchmarks.harness.fingerprint --compare before.json after.json

``--quick`` hashes a few short runs only (seconds, for a smoke test).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import warnings

import numpy as np

from benchmarks.problems import problems

__all__ = ["fingerprints", "compare", "main"]


def _h(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def _ha(a) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


def branin(x, y):
    """Branin (:func:`benchmarks.problems.problems.branin`) as a function of named parameters."""
    return float(problems.branin(np.array([x, y]))[0])


def _trials(trials) -> str:
    return _h([(t.params, t.value) for t in trials])


def _bo(out: dict, quick: bool) -> None:
    import mfbo
    from mfbo import Categorical, Integer, Real

    box = {"x": (-5.0, 10.0), "y": (0.0, 15.0)}
    n = 15 if quick else 40
    runs = [("mondrian", {})] if quick else [
        ("mondrian", {}), ("rf-smac", {}), ("random", {}),
        ("mondrian", {"surrogate_options": {"posterior": "bp"}})]
    for surrogate, opts in runs:
        for seed in (0,) if quick else (0, 1):
            r = mfbo.minimize(branin, box, n_calls=n, random_state=seed, surrogate=surrogate,
                              progress_bar=False, **opts)
            out[f"branin-{surrogate}-{opts}-{seed}"] = _trials(r.trials)
    if quick:
        return
    mixed_space = {"a": Real(0, 1), "b": Integer(1, 20), "c": Categorical(["p", "q", "r"]),
                   "d": Real(1e-3, 1, log=True)}

    def mixed(a, b, c, d):
        return (a - 0.3) ** 2 + (b - 7) ** 2 / 50 + {"p": 0.1, "q": 0, "r": 0.3}[c] + \
            np.log10(d) ** 2 / 9
    for seed in (0, 1):
        r = mfbo.minimize(mixed, mixed_space, n_calls=40, random_state=seed, progress_bar=False)
        out[f"mixed-{seed}"] = _trials(r.trials)
        opt = mfbo.Optimizer(mixed_space, random_state=seed, min_distance=0.05)
        for _ in range(25):
            t = opt.ask()
            opt.tell(t, mixed(**t.params))
        out[f"mixed-mind-{seed}"] = _trials(opt.trials)
    # three categorical parameters of 32 combinations, more than the initial design covers:
    # the stall escape to a combination never observed acts
    combos = {"loss": Categorical(["sq", "abs", "huber", "eps"]),
              "pen": Categorical(["l1", "l2", "en", "none"]),
              "avg": Categorical([False, True]), "x": Real(1e-4, 1, log=True)}

    def combo(loss, pen, avg, x):
        return {"sq": 0.3, "abs": 0.1, "huber": 0.25, "eps": 0.5}[loss] + \
            {"l1": 0.0, "l2": 0.2, "en": 0.1, "none": 0.3}[pen] + 0.05 * avg + \
            (np.log10(x) + 2.5) ** 2 / 20
    for seed in (0, 1):
        r = mfbo.minimize(combo, combos, n_calls=50, random_state=seed, progress_bar=False)
        out[f"combinations-{seed}"] = _trials(r.trials)
    # a loss of plateaus (Branin rounded to tens) beside an integer: losses that tie
    plateau_space = {"x": Real(-5, 10), "y": Real(0, 15), "k": Integer(0, 3)}
    r = mfbo.minimize(lambda x, y, k: float(np.round(branin(x, y) / 10)) + abs(k - 1),
                      plateau_space, n_calls=60, random_state=0, progress_bar=False)
    out["plateaus"] = _trials(r.trials)
    discrete = {"i": Integer(0, 9), "c": Categorical(list("abcde"))}
    r = mfbo.minimize(lambda i, c: (i - 4) ** 2 + "abcde".index(c), discrete, n_calls=30,
                      random_state=0, progress_bar=False)
    out["discrete"] = _trials(r.trials)
    # integers and categoricals only, two of which change no loss (nearest neighbours'
    # leaf_size and algorithm): the losses repeat wherever only those two change
    knn = {"k": Integer(1, 40), "leaf": Integer(5, 100), "alg": Categorical(["a", "b", "c"]),
           "w": Categorical(["u", "d"])}
    r = mfbo.minimize(lambda k, leaf, alg, w: float((k - 9) ** 2 + 3 * (w == "u")), knn,
                      n_calls=60, random_state=0, progress_bar=False)
    out["irrelevant"] = _trials(r.trials)
    # a conditional space: a choice, its branches' own parameters and a forbidden pair
    branch_a, branch_b = {"kind": "a"}, {"kind": "b"}
    conditional = mfbo.Space(
        {"kind": Categorical(["a", "b", "c"]), "shared": Real(0, 1),
         "a_x": Real(0, 1, when=branch_a), "a_y": Real(1e-2, 1, log=True, when=branch_a),
         "b_x": Real(-1, 1, when=branch_b), "b_n": Integer(1, 9, when=branch_b)},
        forbidden=[mfbo.Equals("kind", "c") & mfbo.Between("shared", 0.8, None)])

    def branches(kind, shared, a_x=0.0, a_y=1.0, b_x=0.0, b_n=5):
        return {"a": (a_x - 0.6) ** 2 + np.log10(a_y) ** 2, "b": b_x ** 2 + (b_n - 3) ** 2 / 20,
                "c": 0.2}[kind] + (shared - 0.4) ** 2
    for seed in (0, 1):
        r = mfbo.minimize(branches, conditional, n_calls=40, random_state=seed,
                          progress_bar=False)
        out[f"conditional-{seed}"] = _trials(r.trials)
    opt = mfbo.Optimizer(box, random_state=3)
    for _ in range(15):
        for t in opt.ask(3):
            opt.tell(t, branin(**t.params))
    out["batch"] = _trials(opt.trials)
    r = mfbo.minimize(branin, box, n_calls=14, random_state=0, surrogate="bart",
                      progress_bar=False)
    out["branin-bart"] = _trials(r.trials)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.db")
        mfbo.minimize(branin, box, n_calls=20, random_state=5, storage=path, progress_bar=False)
        r = mfbo.minimize(branin, box, n_calls=30, random_state=5, storage=path,
                          progress_bar=False)
        out["stored-resume"] = _trials(r.trials)
    from sklearn.datasets import make_regression
    from sklearn.linear_model import Ridge

    X, y = make_regression(n_samples=80, n_features=5, noise=1.0, random_state=0)
    cv = mfbo.MondrianSearchCV(Ridge(), {"alpha": Real(1e-3, 10, log=True)}, n_iter=10, cv=3,
                               random_state=0).fit(X, y)
    out["search-cv"] = _h([list(map(float, cv.cv_results_["mean_test_score"])),
                           cv.best_params_])
    try:
        import optuna
    except ImportError:
        out["optuna"] = "optuna not installed"
    else:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        from mfbo.integrations.optuna import MondrianSampler

        study = optuna.create_study(sampler=MondrianSampler(seed=0))
        study.optimize(lambda t: branin(t.suggest_float("x", -5, 10),
                                        t.suggest_float("y", 0, 15)), n_trials=20)
        out["optuna"] = _trials(study.trials)


def _estimators(out: dict, quick: bool) -> None:
    import surrogates

    rng = np.random.default_rng(0)
    X = rng.random((200, 3))
    y = np.sin(5 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(200)
    Xq = rng.random((50, 3))
    names = ["MondrianForestRegressor"] if quick else sorted(surrogates.__all__)
    for name in names:
        cls = getattr(surrogates, name)
        if not isinstance(cls, type):
            continue
        try:
            est = cls(random_state=0) if "random_state" in cls().get_params() else cls()
        except Exception:  # not an estimator made without arguments (a result type)
            continue
        classifier = hasattr(est, "predict_proba")
        est.fit(X, (y > y.mean()).astype(int) if classifier else y)
        if not hasattr(est, "predict"):  # a feature map: its features
            features = est.transform(Xq)
            out[f"est-{name}"] = _ha(features.toarray() if hasattr(features, "toarray")
                                     else features)
            continue
        out[f"est-{name}"] = _ha(est.predict_proba(Xq) if classifier else est.predict(Xq))
        if not classifier:
            try:
                out[f"est-{name}-std"] = _ha(est.predict(Xq, return_std=True)[1])
            except TypeError:  # no return_std
                pass
    if quick:
        return
    Xv = rng.random((60, 3))
    yv = np.sin(5 * Xv[:, 0]) + Xv[:, 1]
    for fn in (surrogates.lifetime_path, surrogates.forest_lifetime_path):
        p = fn(X, y, Xv, yv, max_lifetime=5.0, n_trees=10, random_state=0)
        out[f"path-{fn.__name__}"] = _ha(np.concatenate([p.lifetimes, p.val_rmse,
                                                         p.train_rmse]))
    e = surrogates.MondrianGrid(random_state=0).fit(X, y).explore(Xv, yv, max_steps=10)
    out["grid-explore"] = _ha(np.concatenate([e.lifetimes.ravel(), e.val_rmse]))


def fingerprints(quick: bool = False) -> dict[str, str]:
    """``name -> hash`` of everything listed in the module's docstring (``quick``: a few)."""
    out: dict[str, str] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _bo(out, quick)
        _estimators(out, quick)
    return out


def compare(before: dict, after: dict) -> list[str]:
    """The names whose hashes differ, or that only one of the two has."""
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.harness.fingerprint",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", help="write the hashes to this JSON file")
    parser.add_argument("--quick", action="store_true", help="a few short runs only")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                        help="compare two files of hashes instead")
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.load(open(p)) for p in args.compare)
        differ = compare(before, after)
        print(f"{len(before)} and {len(after)} hashes; "
              + ("identical" if not differ else f"differ: {', '.join(differ)}"))
        return 1 if differ else 0
    out = fingerprints(args.quick)
    text = json.dumps(out, indent=1, sort_keys=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
        print(f"{len(out)} hashes written to {args.out}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
