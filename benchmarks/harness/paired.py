"""Paired comparisons of benchmark runs: a reference method against each other method.

Two runs pair when they share problem, budget and seed, so each pair faced the same problem
with the same evaluations (and, on a random-grid problem, the same grid).  A pair's
difference is ``reference's final best - other's final best``, divided by the spread of the
final best values of every run on that problem and budget (largest minus smallest, all
methods): the sign, hence wins, ties and losses, is that of the raw values, and every problem
weighs alike in the ranks whatever the scale of its objective.  A run whose best is missing
(every evaluation failed) pairs with nothing.

The test is Wilcoxon's signed-rank test (Wilcoxon 1945), two-sided, by
:func:`scipy.stats.wilcoxon` with its defaults: zero differences (ties) are dropped; the
p-value is exact for up to 50 pairs without ties, found by enumerating all sign flips for up
to 13 pairs with ties, and the normal approximation otherwise.  When every pair ties there is
nothing to test: the p-value is 1.  A comparison is
significant at :data:`ALPHA` = 0.05; its direction is the side with the larger signed-rank
sum, "better" when the reference's values are lower (every problem is minimised).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["ALPHA", "pair_differences", "signed_rank_test", "compare", "compare_by"]

#: significance level of the paired tests
ALPHA = 0.05


def _spread(methods: dict[str, list[dict]]) -> float:
    bests = [r["best"] for runs in methods.values() for r in runs if r["best"] is not None]
    return float(max(bests) - min(bests)) if bests else 0.0


def pair_differences(groups: dict[tuple, dict[str, list[dict]]], reference: str,
                     other: str) -> list[tuple[str, int, int, float]]:
    """``(problem, budget, seed, difference)`` of every pair of runs of ``reference`` and
    ``other`` in ``groups`` (``(problem, budget) -> label -> runs``), the difference scaled by
    the problem's spread as the module docstring says (0 when every run there has one
    value)."""
    out = []
    for (problem, budget), methods in groups.items():
        if reference not in methods or other not in methods:
            continue
        spread = _spread(methods)
        theirs = {r["seed"]: r["best"] for r in methods[other] if r["best"] is not None}
        for r in methods[reference]:
            if r["best"] is None or r["seed"] not in theirs:
                continue
            d = r["best"] - theirs[r["seed"]]
            out.append((problem, budget, r["seed"], d / spread if spread > 0 else 0.0))
    return out


def signed_rank_test(differences) -> dict:
    """Wilcoxon's signed-rank test of paired differences ``reference - other``.

    Returns ``n`` (pairs), ``wins`` (reference lower), ``ties``, ``losses``, ``p`` (two-sided;
    1 when every pair ties, ``None`` without pairs) and ``verdict``: ``"better"`` or
    ``"worse"`` (the reference, significant at :data:`ALPHA`) or ``"no"``."""
    from scipy.stats import rankdata, wilcoxon

    d = np.asarray(list(differences), dtype=float)
    if d.ndim != 1 or not np.isfinite(d).all():
        raise ValueError("differences must be a flat sequence of finite numbers.")
    wins, losses = int((d < 0).sum()), int((d > 0).sum())
    out = {"n": int(d.size), "wins": wins, "ties": int(d.size - wins - losses),
           "losses": losses, "p": None, "verdict": "no"}
    if d.size == 0:
        return out
    if wins + losses == 0:
        out["p"] = 1.0
        return out
    p = float(wilcoxon(d).pvalue)
    out["p"] = p
    if math.isfinite(p) and p < ALPHA:
        nonzero = d[d != 0]
        ranks = rankdata(np.abs(nonzero))
        better = ranks[nonzero < 0].sum() > ranks[nonzero > 0].sum()
        out["verdict"] = "better" if better else "worse"
    return out


def compare(groups: dict[tuple, dict[str, list[dict]]], reference: str) -> dict[str, dict]:
    """``other label -> signed_rank_test`` result of ``reference`` against every other method
    with at least one pair in ``groups``, in order of appearance."""
    labels = list(dict.fromkeys(label for methods in groups.values() for label in methods))
    out = {}
    for other in labels:
        if other == reference:
            continue
        pairs = pair_differences(groups, reference, other)
        if pairs:
            out[other] = signed_rank_test([p[3] for p in pairs])
    return out


def compare_by(groups: dict[tuple, dict[str, list[dict]]], reference: str,
               key: Callable[[str], str]) -> dict[str, dict[str, dict]]:
    """:func:`compare` within each class ``key(problem)`` (e.g. a problem family):
    ``class -> other label -> result``, classes in order of appearance."""
    split: dict[str, dict[tuple, dict]] = {}
    for (problem, budget), methods in groups.items():
        split.setdefault(key(problem), {})[(problem, budget)] = methods
    return {k: compare(sub, reference) for k, sub in split.items()}
