"""Where an inactive dimension's coordinate should sit for the forest: measured on the dev split
of the ``conditional`` suite.

A conditional space puts every inactive coordinate at one constant,
:attr:`mfbo.Space.inactive_unit`.  Inside the cube (0.5, the centre, where a default value
would sit) the forest cannot tell an inactive dimension from an active one at that value
without further cuts; outside it (-0.5, or far out at -2) one cut separates them, and the
farther out, the longer the box's side and the likelier a Mondrian cut on that dimension.

``python -m benchmarks.experiments.conditional_inactive --value -0.5 --out DIR`` runs the
``mondrian`` method on ``conditional:dev`` (budget 50, 10 seeds) with that constant into
``DIR/inactive_<value>.jsonl``; ``--summary DIR`` compares the files there: per problem the
mean best loss of each constant, and each constant's mean rank over (problem, seed) cells.
"""

from __future__ import annotations

import argparse
import glob
import json
import os

import numpy as np

__all__ = ["run", "summary", "main"]


def run(value: float, out_dir: str, seeds: int = 10, budget: int = 50) -> str:
    """The dev runs with ``Space.inactive_unit = value``; the results file's path."""
    from benchmarks.harness.bench import run as bench
    from mfbo import Space

    Space.inactive_unit = float(value)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"inactive_{value:g}.jsonl")
    bench("conditional:dev", "mondrian", budget=budget, seeds=seeds, out=path, progress=False)
    return path


def summary(out_dir: str) -> str:
    """A markdown table comparing the constants whose results are in ``out_dir``."""
    best: dict[str, dict[tuple, float]] = {}
    for path in sorted(glob.glob(os.path.join(out_dir, "inactive_*.jsonl"))):
        value = os.path.basename(path)[len("inactive_"):-len(".jsonl")]
        with open(path) as fh:
            best[value] = {(r["problem"], r["seed"]): r["best"] for r in map(json.loads, fh)}
    values = list(best)
    cells = sorted(set.intersection(*(set(b) for b in best.values())))
    problems = sorted({p for p, _ in cells})
    table = np.array([[best[v][c] for v in values] for c in cells])
    ranks = np.array([np.argsort(np.argsort(row, kind="stable")) + 1.0 for row in table])
    for i, row in enumerate(table):  # ties share their mean rank
        for x in np.unique(row):
            ranks[i, row == x] = ranks[i, row == x].mean()
    lines = [f"{len(cells)} (problem, seed) cells; lower is better", "",
             "| problem | " + " | ".join(f"{v}" for v in values) + " |",
             "|---|" + "---|" * len(values)]
    for p in problems:
        rows = [i for i, c in enumerate(cells) if c[0] == p]
        lines.append(f"| {p} | " + " | ".join(f"{table[rows, j].mean():.4g}"
                                             for j in range(len(values))) + " |")
    lines.append("| mean rank | " + " | ".join(f"{ranks[:, j].mean():.2f}"
                                                for j in range(len(values))) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.experiments.conditional_inactive",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--value", type=float, help="the inactive coordinate to run with")
    p.add_argument("--out", default="conditional-inactive", help="the results directory")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--budget", type=int, default=50)
    p.add_argument("--summary", action="store_true", help="compare the files in --out")
    a = p.parse_args(argv)
    if a.summary:
        print(summary(a.out))
    else:
        if a.value is None:
            p.error("--value is needed to run")
        print(run(a.value, a.out, a.seeds, a.budget))


if __name__ == "__main__":
    main()
