"""Top-down SMC for Bayesian decision trees (Lakshminarayanan, 2016 (thesis), chapter 3):
design choices, islands, irrelevant features, and SMC against MCMC and CART.

Run ``python -m benchmarks.experiments.smc_trees [--quick] [--seeds N] [--sections ...]
[--out DIR]``.

Protocol (Section 3.4): hyperparameters ``alpha = 5``, ``alpha_s = 0.95``, ``beta_s = 0.5``, ESS
threshold ``C / 10``; magic-04 split at random 70 / 30 (one split, seed 0), pen-digits with its
predefined train / test parts; test mean log predictive probability ``log p(y | x)`` and
accuracy against fit time (prediction not counted) and against the number of particles,
averaged over ``--seeds`` runs (the thesis: 10).  Sections:

- ``timing``: fit seconds on magic-04 of SMC (prior proposal, node-wise, 100 particles, one
  island, and the estimator's default of 5 islands x 100) against scikit-learn's CART in the
  same run (median of 3 fits each).
- ``design`` (Figs. 3.2-3.3): prior and optimal proposals, node-wise and layer-wise expansion,
  one island.
- ``islands`` (Section 3.4.1.3, Fig. 3.5): a fixed total number of particles ``C`` split over
  ``I`` islands (prior, node-wise).
- ``madelon`` (Section 3.4.1.2, Fig. 3.4): 500 features of which 20 are relevant, from
  scikit-learn's ``make_classification`` (the generator that made Madelon: 5 informative and 15
  redundant features), 2000 train / 600 test points.
- ``compare`` (Sections 3.4.2 and 3.4.4, Fig. 3.6): SMC with 5 islands against Chipman et al.'s
  (1998) MCMC (predictions averaged over all iterations) and CART (gini and entropy,
  ``min_samples_leaf = 10``, leaf probabilities Laplace-smoothed with the same ``alpha``).

Each section writes ``<section>.json``, ``environment_<section>.json`` (date, command, load)
and PNG figures into ``--out``; ``report.md`` (also printed) is rebuilt from every section file
found there, so sections may be run separately.  Every kernel is compiled before anything is
timed.
``--quick`` runs every section on small subsamples (CI smoke test, seconds).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from benchmarks.harness.environment import environment
from benchmarks.harness.figures import figure, save
from benchmarks.harness.tables import markdown_table
from benchmarks.harness.timing import median_time, timed

ALPHA, ALPHA_S, BETA_S = 5.0, 0.95, 0.5
SECTIONS = ("timing", "design", "islands", "madelon", "compare")

FULL = dict(
    design={"prior": [10, 30, 100, 300, 1000], "optimal": [3, 10, 30, 100]},
    islands={"total": 1000, "islands": [1, 2, 5, 10, 20, 50]},
    madelon={"prior": [10, 30, 100, 300, 1000], "optimal": [3, 10, 30]},
    compare={"prior": [100, 250, 500, 1000, 2000], "optimal": [25, 50, 100],
             "mcmc": [100, 300, 1000, 3000, 10000, 30000]},
    subsample=None, madelon_n=(2000, 600))
QUICK = dict(
    design={"prior": [5, 20], "optimal": [2, 5]},
    islands={"total": 20, "islands": [1, 4]},
    madelon={"prior": [5, 20], "optimal": [2]},
    compare={"prior": [10, 20], "optimal": [5], "mcmc": [20, 50]},
    subsample=(600, 300), madelon_n=(300, 100))


# -- data -----------------------------------------------------------------------------------
def load_dataset(name: str, subsample=None, data_home=None):
    """``(X_train, y_train, X_test, y_test)`` of ``magic04``, ``pendigits`` or ``madelon``;
    ``subsample = (n_train, n_test)`` keeps the first rows of each part."""
    from benchmarks.problems.data import load_magic04, load_pendigits

    if name == "magic04":
        from sklearn.model_selection import train_test_split

        X, y = load_magic04(data_home)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
    elif name == "pendigits":
        Xtr, ytr, Xte, yte = load_pendigits(data_home)
    else:
        raise ValueError(f"unknown data set {name!r}")
    if subsample is not None:
        Xtr, ytr, Xte, yte = Xtr[:subsample[0]], ytr[:subsample[0]], Xte[:subsample[1]], \
            yte[:subsample[1]]
    return Xtr, ytr, Xte, yte


def madelon_like(n_train: int, n_test: int, seed: int = 0):
    """Madelon's generator (Guyon 2003) as scikit-learn ships it: 2 classes, 500 features, 5
    informative, 15 linear combinations of them, 480 noise features."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n_train + n_test, n_features=500, n_informative=5,
                               n_redundant=15, n_repeated=0, n_classes=2,
                               n_clusters_per_class=16, flip_y=0.01, class_sep=1.0,
                               random_state=seed)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


# -- evaluation -----------------------------------------------------------------------------
def scores(proba: np.ndarray, classes: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Mean test log predictive probability and accuracy."""
    col = np.searchsorted(classes, y)
    with np.errstate(divide="ignore"):
        logp = float(np.mean(np.log(proba[np.arange(len(y)), col])))
    return logp, float(np.mean(classes[np.argmax(proba, axis=1)] == y))


def run_smc(data, seed, n_particles, n_islands=1, proposal="prior", expansion="node"):
    from surrogates import SMCDecisionTreeClassifier

    Xtr, ytr, Xte, yte = data
    model = SMCDecisionTreeClassifier(n_particles=n_particles, n_islands=n_islands,
                                      proposal=proposal, expansion=expansion, alpha=ALPHA,
                                      alpha_split=ALPHA_S, beta_split=BETA_S,
                                      random_state=seed)
    _, seconds = timed(lambda: model.fit(Xtr, ytr))
    logp, acc = scores(model.predict_proba(Xte), model.classes_, yte)
    return {"fit_s": seconds, "logp": logp, "accuracy": acc,
            "log_evidence": float(np.mean(model.log_evidence_)), "n_trees": model.n_trees_}


def run_mcmc(data, seed, n_iterations):
    from surrogates.bayes_trees.mcmc_classifier import MCMCDecisionTreeClassifier

    Xtr, ytr, Xte, yte = data
    model = MCMCDecisionTreeClassifier(n_iterations=n_iterations, alpha=ALPHA,
                                       alpha_split=ALPHA_S, beta_split=BETA_S,
                                       random_state=seed)
    _, seconds = timed(lambda: model.fit(Xtr, ytr))
    logp, acc = scores(model.predict_proba(Xte), model.classes_, yte)
    return {"fit_s": seconds, "logp": logp, "accuracy": acc,
            "acceptance": float(model.acceptance_rate_)}


def cart_proba(tree, X, n_classes, alpha=ALPHA):
    """CART's leaf label frequencies smoothed as the Bayesian leaves are, ``(c_k + alpha / K)
    / (n + alpha)`` (Section 3.4.4)."""
    leaf = tree.apply(X)
    t = tree.tree_
    counts = t.value[leaf, 0, :] * t.weighted_n_node_samples[leaf, None]
    return (counts + alpha / n_classes) / (counts.sum(axis=1, keepdims=True) + alpha)


def run_cart(data, criterion, min_samples_leaf=10):
    from sklearn.tree import DecisionTreeClassifier

    Xtr, ytr, Xte, yte = data
    model = DecisionTreeClassifier(criterion=criterion, min_samples_leaf=min_samples_leaf,
                                   random_state=0)
    _, seconds = timed(lambda: model.fit(Xtr, ytr))
    logp, acc = scores(cart_proba(model, Xte, len(model.classes_)), model.classes_, yte)
    return {"fit_s": seconds, "logp": logp, "accuracy": acc}


def _summary(runs: list[dict]) -> dict:
    keys = [k for k in runs[0] if isinstance(runs[0][k], (int, float))]
    out = {}
    for k in keys:
        v = np.array([r[k] for r in runs], dtype=float)
        out[k] = float(v.mean())
        out[k + "_sd"] = float(v.std())
        out[k + "_worst"] = float(v.min() if k in ("logp", "accuracy", "log_evidence")
                                  else v.max())
    out["runs"] = len(runs)
    return out


# -- sections -------------------------------------------------------------------------------
def section_timing(cfg, seeds, data_home):
    from sklearn.tree import DecisionTreeClassifier
    from surrogates import SMCDecisionTreeClassifier

    Xtr, ytr, Xte, yte = load_dataset("magic04", cfg["subsample"], data_home)
    rows = {}
    for name, make in (
            ("SMC prior node-wise, 100 particles, 1 island",
             lambda: SMCDecisionTreeClassifier(n_particles=100, n_islands=1, random_state=0)),
            ("SMC default (5 islands x 100 particles)",
             lambda: SMCDecisionTreeClassifier(random_state=0)),
            ("SMC optimal node-wise, 10 particles, 1 island",
             lambda: SMCDecisionTreeClassifier(n_particles=10, n_islands=1,
                                               proposal="optimal", random_state=0)),
            ("CART gini, min_samples_leaf=10",
             lambda: DecisionTreeClassifier(min_samples_leaf=10, random_state=0)),
            ("CART gini, defaults", lambda: DecisionTreeClassifier(random_state=0))):
        model, seconds = median_time(lambda: make().fit(Xtr, ytr), repeats=3)
        proba = (model.predict_proba(Xte) if name.startswith("SMC")
                 else cart_proba(model, Xte, len(model.classes_)))
        logp, acc = scores(proba, model.classes_, yte)
        rows[name] = {"fit_s": seconds, "logp": logp, "accuracy": acc}
    cart = rows["CART gini, min_samples_leaf=10"]["fit_s"]
    for r in rows.values():
        r["ratio_to_cart"] = r["fit_s"] / cart
    return {"n_train": len(ytr), "n_test": len(yte), "methods": rows}


def _design_sweep(data, sizes, seeds, expansions):
    out = {}
    for proposal, Cs in sizes.items():
        for expansion in expansions:
            key = f"{proposal}/{expansion}"
            out[key] = {str(C): _summary([run_smc(data, s, C, 1, proposal, expansion)
                                          for s in range(seeds)]) for C in Cs}
            print(f"  {key}: done", file=sys.stderr, flush=True)
    return out


def section_design(cfg, seeds, data_home):
    res = {}
    for name in ("pendigits", "magic04"):
        data = load_dataset(name, cfg["subsample"], data_home)
        print(f"design: {name}", file=sys.stderr, flush=True)
        res[name] = _design_sweep(data, cfg["design"], seeds, ("node", "layer"))
    return res


def section_islands(cfg, seeds, data_home):
    res = {}
    total = cfg["islands"]["total"]
    for name in ("pendigits", "magic04"):
        data = load_dataset(name, cfg["subsample"], data_home)
        res[name] = {str(I): _summary([run_smc(data, s, total // I, I) for s in range(seeds)])
                     for I in cfg["islands"]["islands"]}
        print(f"islands: {name} done", file=sys.stderr, flush=True)
    return {"total_particles": total, "results": res}


def section_madelon(cfg, seeds, data_home):
    data = madelon_like(*cfg["madelon_n"])
    print("madelon", file=sys.stderr, flush=True)
    return {"n_train": cfg["madelon_n"][0], "n_test": cfg["madelon_n"][1],
            "results": _design_sweep(data, cfg["madelon"], seeds, ("node",))}


def section_compare(cfg, seeds, data_home):
    res = {}
    for name in ("pendigits", "magic04"):
        data = load_dataset(name, cfg["subsample"], data_home)
        r = {}
        for proposal in ("prior", "optimal"):
            r[f"SMC {proposal}"] = {str(C): _summary([run_smc(data, s, max(1, C // 5), 5,
                                                              proposal)
                                                      for s in range(seeds)])
                                    for C in cfg["compare"][proposal]}
        try:
            r["MCMC"] = {str(n): _summary([run_mcmc(data, s, n) for s in range(seeds)])
                         for n in cfg["compare"]["mcmc"]}
        except ImportError:
            pass
        r["CART"] = {c: run_cart(data, c) for c in ("gini", "entropy")}
        res[name] = r
        print(f"compare: {name} done", file=sys.stderr, flush=True)
    return res


# -- figures and report ---------------------------------------------------------------------
_STYLE = {"prior": ("tab:red", "s"), "optimal": ("tab:blue", "o"), "empirical": ("tab:green", "^")}


def _curves(ax, sweep, metric, xkey):
    for key, by_c in sweep.items():
        proposal, expansion = key.split("/")
        color, marker = _STYLE[proposal]
        Cs = sorted(by_c, key=int)
        x = [by_c[c]["fit_s"] if xkey == "time" else int(c) for c in Cs]
        y = [by_c[c][metric] for c in Cs]
        sd = [by_c[c][metric + "_sd"] for c in Cs]
        ax.errorbar(x, y, yerr=sd, color=color, marker=marker,
                    linestyle="-" if expansion == "node" else "--", label=key, capsize=2)
    ax.set_xscale("log")
    ax.set_xlabel("fit time (s)" if xkey == "time" else "number of particles C")
    ax.set_ylabel("test log p(y|x)" if metric == "logp" else "test accuracy")


def _design_figures(res, out):
    paths = []
    for name, sweep in res.items():
        fig, axes = figure(10, 7, 2, 2)
        for i, metric in enumerate(("logp", "accuracy")):
            for j, xkey in enumerate(("time", "particles")):
                _curves(axes[i, j], sweep, metric, xkey)
        axes[0, 0].legend(fontsize=7)
        fig.suptitle(f"{name}: proposals and expansions (cf. thesis Figs. 3.2-3.3)")
        paths.append(save(fig, out / f"design_{name}.png"))
    return paths


def _islands_figure(res, out):
    fig, axes = figure(10, 3.5, 1, 2)
    for name, by_i in res["results"].items():
        Is = sorted(by_i, key=int)
        for ax, metric in zip(axes, ("logp", "accuracy")):
            ax.errorbar([int(i) for i in Is], [by_i[i][metric] for i in Is],
                        yerr=[by_i[i][metric + "_sd"] for i in Is], marker="o", label=name,
                        capsize=2)
            ax.set_xscale("log")
            ax.set_xlabel(f"islands I (C = {res['total_particles']})")
            ax.set_ylabel("test log p(y|x)" if metric == "logp" else "test accuracy")
    axes[0].legend()
    return [save(fig, out / "islands.png")]


def _madelon_figure(res, out):
    fig, axes = figure(10, 7, 2, 2)
    for i, metric in enumerate(("logp", "accuracy")):
        for j, xkey in enumerate(("time", "particles")):
            _curves(axes[i, j], res["results"], metric, xkey)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("Madelon-like data, 480 irrelevant features (cf. thesis Fig. 3.4)")
    return [save(fig, out / "madelon.png")]


def _compare_figure(res, out):
    fig, axes = figure(10, 7, 2, 2, squeeze=False)
    for row, (name, r) in enumerate(res.items()):
        for col, metric in enumerate(("logp", "accuracy")):
            ax = axes[row, col]
            for method, by_n in r.items():
                if method == "CART":
                    for crit, c in by_n.items():
                        ax.axhline(c[metric], color="k", linestyle=":" if crit == "gini"
                                   else "-.", label=f"CART {crit}")
                    continue
                color, marker = (_STYLE[method.split()[1]] if method.startswith("SMC")
                                 else ("k", "D"))
                ks = sorted(by_n, key=int)
                ax.errorbar([by_n[k]["fit_s"] for k in ks], [by_n[k][metric] for k in ks],
                            yerr=[by_n[k][metric + "_sd"] for k in ks], color=color,
                            marker=marker, label=method, capsize=2)
            ax.set_xscale("log")
            ax.set_xlabel("fit time (s)")
            ax.set_ylabel(("test log p(y|x)" if metric == "logp" else "test accuracy")
                          + f" ({name})")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("SMC (5 islands) vs MCMC vs CART (cf. thesis Fig. 3.6)")
    return [save(fig, out / "compare.png")]


def _fmt(s, k):
    return f"{s[k]:.4f} ± {s[k + '_sd']:.4f}" if k + "_sd" in s else f"{s[k]:.4f}"


def _sweep_rows(sweep):
    rows = []
    for key, by_c in sweep.items():
        for c in sorted(by_c, key=int):
            s = by_c[c]
            rows.append([key, c, f"{s['fit_s']:.3f}", _fmt(s, "logp"), _fmt(s, "accuracy"),
                         f"{s['log_evidence']:.1f}", f"{s['logp_worst']:.4f}"])
    return rows


SWEEP_HEAD = ["proposal/expansion", "C", "fit s", "test log p(y|x)", "test accuracy",
              "log p(Y|X) est.", "worst log p"]


def report(out: Path) -> str:
    parts = ["# SMC for Bayesian decision trees (thesis chapter 3)\n",
             "Each section's run: " + "; ".join(
                 f"{name}: {e['date']}, `{' '.join(e.get('argv') or [])}`, seeds per cell "
                 f"{e['seeds']}, cpu_count {e['cpu_count']}, load at start "
                 f"{e['load_average']}"
                 for name in SECTIONS if (f := out / f"environment_{name}.json").exists()
                 for e in [json.loads(f.read_text())]) + ".\n"]
    f = out / "timing.json"
    if f.exists():
        r = json.loads(f.read_text())
        parts.append(f"## Fit time on magic-04 ({r['n_train']} train / {r['n_test']} test)\n")
        parts.append(markdown_table(
            ["method", "fit s (median of 3)", "ratio to CART (msl=10)", "test log p",
             "test accuracy"],
            [[k, f"{v['fit_s']:.3f}", f"{v['ratio_to_cart']:.1f}", f"{v['logp']:.4f}",
              f"{v['accuracy']:.4f}"] for k, v in r["methods"].items()]))
    f = out / "design.json"
    if f.exists():
        for name, sweep in json.loads(f.read_text()).items():
            parts.append(f"## Proposals and expansion, {name} (Figs. 3.2-3.3), one island\n")
            parts.append(markdown_table(SWEEP_HEAD, _sweep_rows(sweep)))
    f = out / "islands.json"
    if f.exists():
        r = json.loads(f.read_text())
        parts.append(f"## Islands, C = {r['total_particles']} in total, prior node-wise "
                     f"(Section 3.4.1.3)\n")
        rows = [[name, I, int(r['total_particles']) // int(I), f"{s['fit_s']:.3f}",
                 _fmt(s, "logp"), _fmt(s, "accuracy")]
                for name, by_i in r["results"].items() for I, s in by_i.items()]
        parts.append(markdown_table(["data", "I", "C/I", "fit s", "test log p(y|x)",
                                     "test accuracy"], rows))
    f = out / "madelon.json"
    if f.exists():
        r = json.loads(f.read_text())
        parts.append(f"## Irrelevant features: Madelon-like, {r['n_train']} train / "
                     f"{r['n_test']} test (Section 3.4.1.2)\n")
        parts.append(markdown_table(SWEEP_HEAD, _sweep_rows(r["results"])))
    f = out / "compare.json"
    if f.exists():
        for name, r in json.loads(f.read_text()).items():
            parts.append(f"## SMC (5 islands) vs MCMC vs CART, {name} (Fig. 3.6)\n")
            rows = []
            for method, by_n in r.items():
                for k, s in by_n.items():
                    rows.append([method, k, f"{s['fit_s']:.3f}", _fmt(s, "logp"),
                                 _fmt(s, "accuracy")])
            parts.append(markdown_table(["method", "C / iterations / criterion", "fit s",
                                         "test log p(y|x)", "test accuracy"], rows))
    return "\n".join(parts) + "\n"


def warm_up() -> None:
    """Compile (or load from numba's cache) every kernel before anything is timed."""
    from surrogates import SMCDecisionTreeClassifier
    from surrogates.bayes_trees.mcmc_classifier import MCMCDecisionTreeClassifier

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 3))
    y = (X[:, 0] > 0.5).astype(int)
    for proposal in ("prior", "empirical", "optimal"):
        for expansion in ("node", "layer"):
            SMCDecisionTreeClassifier(n_particles=4, n_islands=1, proposal=proposal,
                                      expansion=expansion, random_state=0).fit(X, y).predict(X)
    MCMCDecisionTreeClassifier(n_iterations=20, random_state=0).fit(X, y).predict(X)


RUNNERS = {"timing": section_timing, "design": section_design, "islands": section_islands,
           "madelon": section_madelon, "compare": section_compare}
FIGURES = {"design": _design_figures, "islands": _islands_figure, "madelon": _madelon_figure,
           "compare": _compare_figure}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small subsamples (CI)")
    parser.add_argument("--seeds", type=int, default=None, help="runs per cell (default 3; "
                        "1 with --quick)")
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--out", default="results/smc_trees")
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    seeds = args.seeds or (1 if args.quick else 3)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    warm_up()
    results = {}
    for name in args.sections:
        record = environment(argv)  # per section: sections may come from separate runs
        record["seeds"] = seeds
        res = RUNNERS[name](cfg, seeds, args.data_home)
        (out / f"{name}.json").write_text(json.dumps(res, indent=1))
        (out / f"environment_{name}.json").write_text(json.dumps(record, indent=1))
        if name in FIGURES:
            FIGURES[name](res, out)
        results[name] = res
    text = report(out)
    (out / "report.md").write_text(text)
    print(text)
    return results


if __name__ == "__main__":
    main()
