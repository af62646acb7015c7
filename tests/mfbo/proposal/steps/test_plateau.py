"""The recipe's plateau escape: a random proposal after every run of repeated losses; and its
``exclude=True``: no step proposes inside a plateau that observations of one loss bracket
(the boxes by hand, the acquisition's ``-inf`` there, every proposal of a run outside them,
random points allowed, continuous losses unchanged, a resumed study, old pickles, bad
input); and its ``slices=True``: in a space without a continuous coordinate, the slice that
two observations of one loss share is a plateau too (every proposal of a run outside them,
spaces with a real unchanged, a resumed study, pickles, bad input; the slices themselves in
``test_slices.py``)."""


import numpy as np
import pytest

import mfbo
from mfbo.proposal import PlateauEscape
from mfbo.proposal.steps.plateau import in_plateaus, plateau_boxes
from mfbo.proposal.steps.slices import in_slices, plateau_slices
from tests.support import quad, run_trials

SPACE = mfbo.Space({"x": mfbo.Real(-1.0, 1.0), "y": mfbo.Real(-1.0, 1.0)})


def _recipe(m):
    """The default recipe with a plateau escape after every ``m`` repeats (0: none) and no
    exclusion of bracketed plateaus (which, where every loss ties, leaves random points only
    and so would hide which proposals the escape made)."""
    recipe = mfbo.get_recipe("mondrian")
    if m == 0:
        return recipe.without(PlateauEscape)
    return recipe.with_settings(PlateauEscape, every=m, exclude=False)


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


# -- exclude=True: no proposal inside a bracketed plateau -------------------------------------
def test_the_boxes_of_equal_losses_with_the_same_discrete_coordinates():
    levels = [0, 3, 0]  # a real, an ordinal of three levels, a real
    X = np.array([[0.1, 0.5, 0.2], [0.4, 0.5, 0.6], [0.3, 0.5, 0.9],    # loss 1 at level 0.5
                  [0.2, 1 / 6, 0.3], [0.5, 5 / 6, 0.3],                 # loss 1, other levels
                  [0.7, 0.5, 0.1]])                                       # loss 3, alone
    y = np.array([1.0, 1.0, 2.0, 1.0, 1.0, 3.0])
    boxes = plateau_boxes(X, y, levels)
    assert len(boxes) == 1
    values, low, high = boxes[0]
    assert np.allclose(values, [0.5]) and np.allclose(low, [0.1, 0.2]) and \
        np.allclose(high, [0.4, 0.6])
    U = np.array([[0.25, 0.5, 0.4], [0.25, 5 / 6, 0.4], [0.45, 0.5, 0.4], [0.1, 0.5, 0.6]])
    assert list(in_plateaus(U, boxes, levels)) == [True, False, False, True]
    assert plateau_boxes(X[:, [1]], y, [3]) == []  # no continuous coordinate: no box


def test_equal_losses_either_side_of_another_loss_bracket_no_plateau():
    # a peak (or a dip) between two equal losses: the box spanning them holds another loss
    X = np.array([[0.1, 0.2], [0.5, 0.6], [0.3, 0.4], [0.9, 0.9], [0.8, 0.1]])
    for middle, expected in ((0.5, 0), (2.0, 0), (1.0, 1)):
        y = np.array([1.0, 1.0, middle, 3.0, 4.0])
        assert len(plateau_boxes(X, y, [0, 0])) == expected
    # another loss outside the box, or at other discrete coordinates, leaves the plateau
    X = np.array([[0.1, 0.0, 0.2], [0.5, 0.0, 0.6], [0.3, 1.0, 0.4], [0.9, 0.0, 0.9]])
    y = np.array([1.0, 1.0, 0.5, 0.2])
    (values, low, high), = plateau_boxes(X, y, [0, 2, 0])
    assert values == [0.0] and np.allclose(low, [0.1, 0.2]) and np.allclose(high, [0.5, 0.6])


def _stepped(x, y):
    """A loss of wide plateaus: 1 everywhere but a small disc."""
    return 0.0 if (x - 0.6) ** 2 + (y + 0.4) ** 2 < 0.02 else float(round(3 * abs(x)) + 1)


def _optimizer(seed=0, exclude=True, **kw):
    """An optimizer of the default recipe over ``SPACE``, with the plateau exclusion on or
    off."""
    recipe = mfbo.get_recipe("mondrian").with_settings(PlateauEscape, exclude=exclude)
    return mfbo.Optimizer(SPACE, surrogate=recipe, random_state=seed, **kw)


def test_the_default_excludes_bracketed_plateaus():
    step, = [s for s in mfbo.get_recipe("mondrian").steps if isinstance(s, PlateauEscape)]
    assert step.exclude
    assert mfbo.Optimizer(SPACE, random_state=0).proposer.excludes_plateaus


def test_no_model_proposal_lands_in_a_plateau_already_bracketed():
    opt = _optimizer(1)
    n0 = opt.n_initial
    random_ones = _record_random(opt)
    inside = 0
    for i in range(60):
        t = opt.ask()
        if i >= n0 and i not in random_ones:
            study = opt.study
            boxes = plateau_boxes(study.obs.X, study.obs.y, SPACE.levels)
            u = SPACE.to_unit([t.params])
            inside += int(in_plateaus(u, boxes, SPACE.levels)[0])
        opt.tell(t, _stepped(**t.params))
    assert opt.proposer.excludes_plateaus and inside == 0
    # without the exclusion the steps propose inside them again and again
    default = _optimizer(1, exclude=False)
    again = 0
    for i in range(60):
        t = default.ask()
        if i >= n0:
            study = default.study
            boxes = plateau_boxes(study.obs.X, study.obs.y, SPACE.levels)
            again += int(in_plateaus(SPACE.to_unit([t.params]), boxes, SPACE.levels)[0])
        default.tell(t, _stepped(**t.params))
    assert again > 5


def test_the_acquisition_scores_a_bracketed_plateau_minus_infinity():
    opt = run_trials(_optimizer(2), _stepped, 25)
    boxes = opt.proposer.plateaus(opt.study)
    assert boxes
    values, low, high = boxes[0]
    centre = (low + high) / 2
    grid = np.random.default_rng(0).random((500, 2))
    outside = grid[~in_plateaus(grid, boxes, SPACE.levels)][0]
    score = opt.proposer.outside_plateaus(lambda U: np.zeros(len(U)), opt.study)
    out = score(np.array([centre, outside]))
    assert out[0] == -np.inf and np.isfinite(out[1])


def test_only_the_points_outside_the_plateaus_are_scored():
    opt = run_trials(_optimizer(2), _stepped, 25)
    grid = np.random.default_rng(1).random((500, 2))
    inside = opt.proposer.in_plateaus(grid, opt.study)
    assert inside.any() and not inside.all()
    asked = []

    def acquisition(U):
        asked.append(np.array(U))
        return U.sum(axis=1) ** 2
    out = opt.proposer.outside_plateaus(acquisition, opt.study)(grid)
    # the acquisition saw only the points outside, and each scores as it would alone
    assert len(asked) == 1 and np.array_equal(asked[0], grid[~inside])
    assert np.all(out[inside] == -np.inf)
    assert np.array_equal(out[~inside], grid[~inside].sum(axis=1) ** 2)
    # every point inside: not called at all; none inside: called on every point
    asked.clear()
    assert np.all(opt.proposer.outside_plateaus(acquisition, opt.study)(
        grid[inside]) == -np.inf) and not asked
    assert np.array_equal(opt.proposer.outside_plateaus(acquisition, opt.study)(
        grid[~inside]), out[~inside]) and len(asked) == 1


def test_random_points_may_land_on_a_plateau_so_a_run_never_runs_dry():
    # one loss everywhere: the plateau is soon the whole square, and the run still has 50
    opt = run_trials(_optimizer(3), lambda **p: 1.0, 50)
    assert opt.n_finished == 50


def test_exclusion_changes_nothing_without_repeats_and_resumes(tmp_path):
    runs = []
    for make in (lambda: _optimizer(4, exclude=False), lambda: _optimizer(4)):
        runs.append([t.params for t in run_trials(make(), quad, 30).trials])
    assert runs[0] == runs[1]
    _assert_resumes_as_one_run(_optimizer, _stepped, tmp_path)


def _assert_resumes_as_one_run(make, f, tmp_path):
    """A study of ``make(5, ...)`` stopped after 24 trials of ``f`` and reopened goes on as
    the whole run of 40 did."""
    path = str(tmp_path / "s.db")
    whole = run_trials(make(5), f, 40)
    run_trials(make(5, storage=path), f, 24).close()
    resumed = run_trials(make(5, storage=path), f, 16)
    assert [t.params for t in resumed.trials] == [t.params for t in whole.trials]


def test_exclude_is_checked_and_old_pickles_go_on():
    import pickle

    with pytest.raises(TypeError, match=r"PlateauEscape\(exclude=\.\.\.\)"):
        PlateauEscape(exclude="yes")
    opt = run_trials(_optimizer(6, exclude=False), _stepped, 15)
    for name in ("excludes_plateaus", "_plateaus"):
        delattr(opt.proposer, name)  # a proposer pickled before the option existed
    again = pickle.loads(pickle.dumps(opt))
    run_trials(again, _stepped, 3)
    assert again.n_finished == 18


# -- slices=True: in a space without a continuous coordinate, the slice two equal losses share --

KNN = mfbo.Space({"k": mfbo.Integer(1, 30), "junk": mfbo.Integer(1, 40),
                  "algorithm": mfbo.Categorical(["a", "b", "c"]),
                  "weights": mfbo.Categorical(["uniform", "distance"])})


def _knn_like(k, junk, algorithm, weights):
    """A loss of ``k`` and ``weights`` alone, as nearest neighbours' is of ``n_neighbors``
    and ``weights`` but not of ``leaf_size`` or ``algorithm``."""
    return float((k - 9) ** 2 + (3 if weights == "uniform" else 0))


def test_the_proposer_remakes_its_slices_when_an_earlier_loss_changes():
    opt = run_trials(_slices_optimizer(3, reach=1.0), _knn_like, 30)
    study, proposer = opt.study, opt.proposer
    made = proposer.slices(study)
    assert made and proposer._slice_ranges[0] == study.obs.n
    def as_set(slices):
        return sorted((lw.tolist(), hg.tolist(), loss) for lw, hg, loss in slices)

    whole = as_set(plateau_slices(study.obs.X, study.obs.y, KNN.levels, 1.0))
    assert as_set(made) == whole
    # with the cache's observations those of the study, its slices are kept and only the new
    # observation's pairs added (a cache emptied on purpose shows it)
    m, slices, (X, y) = proposer._slice_ranges
    proposer._slice_ranges = (m - 1, [], (X[:-1], y[:-1]))
    assert as_set(proposer.slices(study)) != whole
    # with an earlier loss changed, the slices are made again from all the observations
    proposer._slice_ranges = (m - 1, [], (X[:-1], y[:-1] + 1.0))
    assert as_set(proposer.slices(study)) == whole


def _slices_optimizer(seed=0, slices=True, space=KNN, reach=None, **kw):
    recipe = mfbo.get_recipe("mondrian").with_settings(PlateauEscape, slices=slices,
                                                       reach=reach)
    return mfbo.Optimizer(space, surrogate=recipe, random_state=seed, **kw)


@pytest.mark.parametrize("reach", [None, 1.0])
def test_no_model_proposal_lands_in_a_slice_already_made_a_plateau(reach):
    counts = []
    for slices in (True, False):
        opt = _slices_optimizer(1, slices, reach=reach)
        random_ones = _record_random(opt)
        inside = 0
        for i in range(70):
            t = opt.ask()
            if i >= opt.n_initial and i not in random_ones:
                study = opt.study
                made = plateau_slices(study.obs.X, study.obs.y, KNN.levels, reach)
                inside += int(in_slices(KNN.to_unit([t.params]), made, KNN.levels)[0])
            opt.tell(t, _knn_like(**t.params))
        counts.append(inside)
    assert counts[0] == 0 and counts[1] > 5  # without it the steps go back again and again


def test_slices_change_nothing_in_a_space_with_a_continuous_coordinate(tmp_path):
    runs = [[t.params for t in run_trials(_slices_optimizer(4, s, SPACE), _stepped,
                                          30).trials] for s in (False, True)]
    assert runs[0] == runs[1]
    _assert_resumes_as_one_run(_slices_optimizer, _knn_like, tmp_path)


def test_slices_is_checked_and_old_pickles_go_on():
    import pickle

    with pytest.raises(TypeError, match=r"PlateauEscape\(slices=\.\.\.\)"):
        PlateauEscape(slices=1)
    for bad in ("yes", -1, True, float("inf")):
        with pytest.raises(ValueError, match=r"PlateauEscape\(reach=\.\.\.\)"):
            PlateauEscape(slices=True, reach=bad)
    opt = run_trials(_slices_optimizer(6), _knn_like, 30)
    again = pickle.loads(pickle.dumps(opt))

    def listed(o):
        return sorted((a.tolist(), v.tolist(), loss) for a, v, loss in o.proposer.slices(o.study))

    assert listed(again) == listed(opt) != []
    # a proposer pickled with the earlier cache of slices, (agreed, values) pairs: remade
    cached = opt.proposer._slice_ranges
    del opt.proposer._slice_ranges, opt.proposer._reach
    opt.proposer._slices = (cached[0], [(lo == hi, lo[lo == hi]) for lo, hi, _ in cached[1]])
    earlier = pickle.loads(pickle.dumps(opt))
    assert not hasattr(earlier.proposer, "_slices") and listed(earlier) == listed(again)
    # a proposer pickled with the earlier index of slices, a tuple of tables: made afresh
    again.proposer._slice_index = ([], (np.zeros((0, 4)), np.zeros((0, 4)), [None] * 4))
    assert again.proposer.in_plateaus(KNN.to_unit([t.params for t in again.trials]),
                                      again.study).any()
    for name in ("_plateau_slices", "_slices"):
        delattr(opt.proposer, name)  # a proposer pickled before the option existed
    old = pickle.loads(pickle.dumps(opt))
    run_trials(old, _knn_like, 3)
    assert old.n_finished == 33 and old.proposer.slices(old.study) == []
