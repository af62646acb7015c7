"""The portfolio step: its credit in closed form, its draw against the Beta posteriors by
Monte Carlo and by integration, its own random stream, replay after reopening, bad input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from mfbo import Optimizer
from mfbo.proposal import (AcquisitionSearch, Arm, LocalStep, Portfolio, RandomInterleave,
                           get_recipe)
from tests.support import SPACE, quad


def two_arms(discount=0.9, prior=(1.0, 1.0)):
    return Portfolio(arms=(Arm("model", (LocalStep(every=1), AcquisitionSearch(n_random=200))),
                           Arm("random", (RandomInterleave(1.0),), prior)),
                     discount=discount)


def recipe_with(*steps):
    return dataclasses.replace(get_recipe("mondrian"), steps=steps, name=None)


def test_posteriors_count_discounted_new_bests_per_arm():
    p = two_arms(discount=0.5, prior=(2.0, 3.0))
    y = np.array([5.0, 4.0, 4.5, 1.0, 1.0, 0.5])
    origins = ["design", "local", "random", "acquisition", "random", "random"]
    ab = p.posteriors(y, origins)
    # rows 1..5, weights 0.5**4 .. 0.5**0; new bests at rows 1 (4 < 5), 3 (1 < 4) and 5
    w = 0.5 ** np.arange(4, -1, -1)
    expected = np.array([[1 + w[0] + w[2], 1.0],               # model: rows 1 and 3 improved
                         [2 + w[4], 3 + w[1] + w[3]]])         # random: 5 did, 2 and 4 did not
    np.testing.assert_allclose(ab, expected)
    # rows of no arm (the design, an enqueued configuration) count for none
    np.testing.assert_allclose(p.posteriors(y, ["design"] + ["enqueued"] * 5),
                               [[1, 1], [2, 3]])
    np.testing.assert_allclose(p.posteriors(y[:1], origins[:1]), [[1, 1], [2, 3]])


def test_without_forgetting_the_counts_are_plain():
    p = two_arms(discount=1.0)
    y = np.array([3.0, 2.0, 2.5, 1.0])
    ab = p.posteriors(y, ["design", "random", "random", "local"])
    np.testing.assert_allclose(ab, [[2, 1], [2, 2]])


def test_the_draw_follows_the_posteriors():
    """The share of proposals given to an arm is P(theta_model > theta_random) under the
    arms' Beta posteriors (by integration), within Monte Carlo error over many proposals."""
    p = two_arms(discount=1.0)
    opt = Optimizer(SPACE, surrogate=recipe_with(p), random_state=3, n_initial=4)
    for _ in range(12):
        t = opt.ask()
        opt.tell(t, quad(**t.params))
    study = opt.study
    (a1, b1), (a2, b2) = p.posteriors(study.obs.y, study.obs_origins)
    prob, _ = integrate.quad(lambda t: stats.beta.pdf(t, a1, b1) * stats.beta.cdf(t, a2, b2),
                             0, 1)

    class Ctx:  # what choose reads: the study and a proposal's own stream
        def __init__(self, number):
            self.study, self.number, self.proposer = study, number, opt.proposer
    from mfbo.proposal.steps.base import Context
    Ctx.stream = Context.stream
    n = 4000
    picks = sum(p.choose(Ctx(k)).name == "model" for k in range(n))
    assert abs(picks / n - prob) < 4 * np.sqrt(prob * (1 - prob) / n)


def test_the_random_arm_proposes_what_random_interleaving_would():
    """The draw uses a stream of its own: a proposal given to the random arm is the point a
    recipe of random interleaving alone proposes for the same trial."""
    pf = Optimizer(SPACE, surrogate=recipe_with(two_arms()), random_state=5, n_initial=4)
    plain = Optimizer(SPACE, surrogate=recipe_with(RandomInterleave(1.0)), random_state=5,
                      n_initial=4)
    seen = 0
    for _ in range(20):
        t = pf.ask()
        u = plain.ask()
        if t.origin == "random":
            assert t.params == u.params
            seen += 1
        pf.tell(t, quad(**t.params))
        plain.tell(u, quad(**u.params))  # (the two studies number their trials alike)
    assert seen > 0


def test_origins_name_the_arms_steps_and_replay_after_reopening(tmp_path):
    db = str(tmp_path / "pf.db")
    recipe = recipe_with(two_arms())
    opt = Optimizer(SPACE, surrogate=recipe, random_state=1, n_initial=5, storage=db)
    for _ in range(20):
        t = opt.ask()
        opt.tell(t, quad(**t.params))
    origins = [t.origin for t in opt.trials]
    assert origins[:5] == ["design"] * 5
    assert set(origins[5:]) <= {"local", "acquisition", "random"}
    before = two_arms().posteriors(opt.study.obs.y, opt.study.obs_origins)
    opt.close()
    again = Optimizer(SPACE, surrogate=recipe, random_state=1, n_initial=5, storage=db)
    assert [t.origin for t in again.trials] == origins
    np.testing.assert_array_equal(
        two_arms().posteriors(again.study.obs.y, again.study.obs_origins), before)
    again.close()


@pytest.mark.parametrize("make, message", [
    (lambda: Portfolio(arms=(Arm("a", (AcquisitionSearch(),)),)), "at least two"),
    (lambda: Portfolio(arms=(Arm("a", (AcquisitionSearch(),)),
                             Arm("a", (RandomInterleave(1.0),)))), "distinct"),
    (lambda: Portfolio(arms=(Arm("a", (AcquisitionSearch(),)),
                             Arm("b", (AcquisitionSearch(n_random=10),)))), "origin"),
    (lambda: two_arms(discount=0.0), "discount"),
    (lambda: two_arms(discount=1.5), "discount"),
    (lambda: two_arms(prior=(0.0, 1.0)), "prior"),
    (lambda: two_arms(prior=(1.0,)), "prior"),
    (lambda: Arm("", (AcquisitionSearch(),)), "name"),
    (lambda: Arm("a", ()), "at least one"),
])
def test_bad_portfolios_are_refused_naming_the_argument(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_an_arm_holds_steps_and_no_portfolio():
    with pytest.raises(TypeError, match="steps"):
        Arm("a", ("acquisition",))
    with pytest.raises(TypeError, match="Portfolio"):
        Arm("a", (two_arms(),))


def test_an_arm_that_passes_hands_the_proposal_to_the_next_arm():
    """In a space without a categorical parameter the category arm passes, and the portfolio
    of the default's steps and that arm proposes exactly what the default does (its draw has
    a stream of its own)."""
    from mfbo.proposal import CategoryStep
    default = get_recipe("mondrian")
    both = recipe_with(Portfolio(arms=(Arm("model", default.steps),
                                       Arm("category", (CategoryStep(),)))))
    runs = []
    for recipe in (default, both):
        opt = Optimizer(SPACE, surrogate=recipe, random_state=2, n_initial=5)
        for _ in range(16):
            t = opt.ask()
            opt.tell(t, quad(**t.params))
        runs.append([(t.params, t.origin) for t in opt.trials])
    assert runs[0] == runs[1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["design", "local", "random",
                                                              "acquisition", None])),
                max_size=30),
       st.sampled_from([0.5, 0.9, 1.0]))
def test_posteriors_agree_with_a_plain_loop(rows, discount):
    """Against the definition, one observation at a time (losses with ties: a tie with the
    best so far is no new best)."""
    p = two_arms(discount=discount, prior=(2.0, 3.0))
    y = np.array([float(v) for v, _ in rows])
    origins = [o for _, o in rows]
    expected = np.array([[1.0, 1.0], [2.0, 3.0]])
    arm = {"local": 0, "acquisition": 0, "random": 1}
    for i in range(1, len(rows)):
        if origins[i] not in arm:
            continue
        w = discount ** (len(rows) - 1 - i)
        new_best = y[i] < y[:i].min()
        expected[arm[origins[i]], 0 if new_best else 1] += w
    np.testing.assert_allclose(p.posteriors(y, origins), expected, rtol=1e-12, atol=1e-12)
