"""The recipe's plateau escape: a random proposal after every run of repeated losses."""


import numpy as np
import pytest

import mfbo
from mfbo.proposal import PlateauEscape
from tests.support import quad, run_trials

SPACE = mfbo.Space({"x": mfbo.Real(-1.0, 1.0), "y": mfbo.Real(-1.0, 1.0)})


def _recipe(m):
    """The default recipe with a plateau escape after every ``m`` repeats (0: none)."""
    recipe = mfbo.get_recipe("mondrian")
    if m == 0:
        return recipe.without(PlateauEscape)
    return recipe.with_settings(PlateauEscape, every=m)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_recipe_refuses_a_bad_plateau_escape(bad):
    with pytest.raises(ValueError, match=r"PlateauEscape\(every=\.\.\.\)"):
        _recipe(bad)


def _record_random(opt):
    """A list that from now on receives the numbers of the trials whose proposal was
    uniformly random."""
    proposer = opt.proposer
    original = proposer.random_point
    numbers = []

    def recorded(study, rng):
        numbers.append(study.n_trials)
        return original(study, rng)

    proposer.random_point = recorded
    return numbers


def _random_proposals(opt, f, n):
    """Run ``n`` sequential trials; the trial numbers whose proposal was uniformly random."""
    numbers = _record_random(opt)
    run_trials(opt, f, n)
    return numbers


@pytest.mark.parametrize("m", [2, 3, 5])
def test_a_random_proposal_after_every_m_repeated_losses(m):
    # every loss repeats the first one: after the initial design, every m-th proposal is
    # random, whatever the proposals in between
    opt = mfbo.Optimizer(SPACE, surrogate=_recipe(m), random_state=0)
    n0 = opt.n_initial
    got = _random_proposals(opt, lambda **p: 1.0, n0 + 4 * m + 1)
    assert got == [n0 + k * m for k in range(1, 5)]


def test_a_new_loss_ends_the_run():
    # losses repeat except at the trials listed: the count starts again after each
    m = 3
    fresh = {12, 17}
    opt = mfbo.Optimizer(SPACE, surrogate=_recipe(m), random_state=1)
    n0 = opt.n_initial
    assert n0 == 10
    calls = iter(range(100))
    got = _random_proposals(opt, lambda **p: float(i) if (i := next(calls)) in fresh else 0.5,
                            24)
    # runs of repeats: trials 10-11 (2), then 13-16 (4; escape before trial 16, after 13, 14
    # and 15), then 18- (escape before 21 and 24)
    assert got == [16, 21]


def test_without_repeats_nothing_changes():
    # a continuous loss never repeats: the same trials as without the escape
    runs = []
    for m in (0, 3):
        opt = mfbo.Optimizer(SPACE, surrogate=_recipe(m), random_state=2)
        for _ in range(30):
            t = opt.ask()
            opt.tell(t, quad(**t.params))
        runs.append(np.array([list(t.params.values()) for t in opt.trials]))
    np.testing.assert_array_equal(*runs)


def test_the_escape_is_replayed_from_the_journal(tmp_path):
    # the decision is a function of the study's observations: a study resumed from its
    # journal in the middle of a run of repeats escapes where it would have without the stop
    path = str(tmp_path / "s.db")
    m = 3
    opt = mfbo.Optimizer(SPACE, surrogate=_recipe(m), random_state=3, storage=path)
    n0 = opt.n_initial
    first = _random_proposals(opt, lambda **p: 1.0, n0 + m + 2)
    opt.close()
    resumed = mfbo.Optimizer(SPACE, surrogate=_recipe(m), random_state=3, storage=path)
    then = _random_proposals(resumed, lambda **p: 1.0, 2 * m)
    assert first + then == [n0 + k * m for k in range(1, 4)]


@pytest.mark.parametrize("batch", [1, 3, 4])
def test_one_escape_per_batch(batch):
    # the proposals of one batch share their observations: only the first of them escapes,
    # the others are the acquisition's (with the escape's point among the pending ones)
    m = 3
    opt = mfbo.Optimizer(SPACE, surrogate=_recipe(m), random_state=4)
    n0 = opt.n_initial
    for _ in range(n0 + m):
        t = opt.ask()
        opt.tell(t, 1.0)
    numbers = _record_random(opt)
    trials = opt.ask(batch)
    assert numbers == [n0 + m]
    assert opt.study.n_asked_since_observed == batch
    # told, the batch makes the run m + batch repeats long: the next batch escapes (once)
    # when that is a multiple of m
    for t in trials:
        opt.tell(t, 1.0)
    numbers.clear()
    opt.ask(batch)
    assert numbers == ([n0 + m + batch] if batch % m == 0 else [])


def test_a_run_of_failed_trials_escapes_like_repeated_losses():
    # a failed trial is recorded as the worst loss so far, a repeat: after the initial
    # design, m failures in a row are followed by a random proposal; without those rows
    # (on_failure="ignore") failures leave no trace and never trigger it
    m = 3
    for on_failure, expected in (("worst", True), ("ignore", False)):
        opt = mfbo.Optimizer(SPACE, surrogate=_recipe(m), random_state=5,
                             on_failure=on_failure)
        n0 = opt.n_initial
        calls = iter(range(100))
        run_trials(opt, lambda **p: quad(**p) + next(calls), n0)  # distinct losses
        numbers = _record_random(opt)
        for _ in range(m + 1):
            t = opt.ask()
            opt.tell(t, None)
        assert opt.study.obs.n == (n0 + m + 1 if on_failure == "worst" else n0)
        assert (numbers == [n0 + m]) is expected
