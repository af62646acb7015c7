"""The category step: its categorical values are drawn uniformly, the rest searched by the
acquisition; it passes where it does not apply."""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from mfbo import Categorical, Integer, Optimizer, Real
from mfbo.proposal import CategoryStep, get_recipe
from tests.support import SPACE, quad

MIXED = {"kind": Categorical(["a", "b", "c"]), "x": Real(0.0, 1.0), "n": Integer(1, 5),
         "y": Real(0.0, 1.0, when={"kind": "b"})}


def loss(kind, x, n, y=0.5):
    return {"a": 1.0, "b": 0.0, "c": 2.0}[kind] + (x - 0.3) ** 2 + 0.01 * n + (y - 0.7) ** 2


def category_only():
    return dataclasses.replace(get_recipe("mondrian"), steps=(CategoryStep(n_random=200),),
                               name=None)


def test_the_choices_are_uniform_and_the_rest_follows_the_acquisition():
    opt = Optimizer(MIXED, surrogate=category_only(), random_state=0, n_initial=6)
    for _ in range(66):
        t = opt.ask()
        opt.tell(t, loss(**t.params))
    after = opt.trials[6:]
    assert all(t.origin == "category" for t in after)
    counts = Counter(t.params["kind"] for t in after)
    # uniform over the three choices although "c" is the worst by far (chi-square test)
    assert stats.chisquare([counts[k] for k in "abc"]).pvalue > 0.001
    # the continuous parameter is searched, not drawn: it gathers near its best value
    x = np.array([t.params["x"] for t in after[-30:]])
    assert np.median(np.abs(x - 0.3)) < 0.15
    # a parameter inactive under the drawn choice is inactive in the proposal
    assert all(("y" in t.params) == (t.params["kind"] == "b") for t in after)


def test_it_passes_without_categorical_parameters_and_on_a_candidate_set():
    opt = Optimizer(SPACE, surrogate=category_only(), random_state=0, n_initial=4)
    for _ in range(8):
        t = opt.ask()
        opt.tell(t, quad(**t.params))
    # every proposal after the design fell through to the random point
    assert [t.origin for t in opt.trials[4:]] == ["random"] * 4
    cands = [{"kind": k, "x": x, "n": 1} for k in "abc" for x in (0.1, 0.5)]
    opt = Optimizer({"kind": Categorical(["a", "b", "c"]), "x": Real(0.0, 1.0),
                     "n": Integer(1, 5)}, surrogate=category_only(), random_state=0,
                    n_initial=2, candidates=cands)
    for _ in range(5):
        t = opt.ask()
        opt.tell(t, loss(**t.params))
    assert {t.origin for t in opt.trials[2:]} == {"random"}


def test_a_bad_setting_is_refused():
    with pytest.raises((TypeError, ValueError), match="n_random"):
        CategoryStep(n_random=0)


def test_the_thompson_draw_follows_each_values_record_of_good_losses():
    """With draw="thompson" each categorical value is chosen with the probability that its
    Beta(1 + good, 1 + other) draw is the largest: checked against Monte Carlo of those
    posteriors over many proposals; a value never tried keeps the prior and is drawn too."""
    from mfbo.proposal.steps.base import Context
    space = {"kind": Categorical(["a", "b", "c", "d"]), "x": Real(0.0, 1.0)}
    opt = Optimizer(space, random_state=0, n_initial=2)
    rng = np.random.default_rng(0)
    # "a" often good, "b" often poor, "c" twice (once good), "d" never
    rows = [("a", 0.1)] * 6 + [("a", 0.9)] * 2 + [("b", 0.8)] * 8 + [("c", 0.1), ("c", 0.9)]
    for kind, y in rows:
        opt.tell({"kind": kind, "x": float(rng.random())}, y)
    step = CategoryStep(draw="thompson")
    cat = np.array([0])
    picks = Counter()
    n = 3000
    for k in range(n):
        ctx = Context(opt.proposer, opt.study, k, np.random.default_rng([9, k]))
        u = step.choices(ctx, cat)[0]
        picks["abcd"[int(u * 4)]] += 1
    y = opt.study.obs.y
    good = y <= np.quantile(y, 0.25)
    kinds = np.array([t.params["kind"] for t in opt.trials])
    a = np.array([1 + np.sum(good & (kinds == v)) for v in "abcd"])
    b = np.array([1 + np.sum(~good & (kinds == v)) for v in "abcd"])
    mc = np.random.default_rng(1).beta(a, b, size=(200_000, 4)).argmax(axis=1)
    for i, v in enumerate("abcd"):
        p = np.mean(mc == i)
        assert abs(picks[v] / n - p) < 4 * np.sqrt(p * (1 - p) / n) + 1e-3, (v, picks, p)
    assert picks["d"] > 0 and picks["a"] > picks["b"]


def test_a_bad_draw_is_refused():
    with pytest.raises(ValueError, match="draw"):
        CategoryStep(draw="softmax")
