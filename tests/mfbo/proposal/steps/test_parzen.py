"""The Parzen density of the best observations and the recipe's global steps drawn from it;
its compiled truncated-normal draw against numpy's form of it (the same numbers from the same
generator, which is left at the same place, so a Parzen step proposes the same points
whichever it takes)."""

import json
import os
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import mfbo
from acquisitions import maximize_random_local, snap
from mfbo.proposal import LocalStep, ParzenStep, PlateauEscape
from mfbo.proposal.steps import parzen
from mfbo.proposal.steps._parzen_kernels import truncated_normal_into
from mfbo.proposal.steps.parzen import (_REDRAWS, MAX_GOOD, ParzenDensity, good_region_sample,
                                        n_good, truncated_normal)
from tests.support import quad, run_trials

SPACE = mfbo.Space({"x": mfbo.Real(-1.0, 1.0), "y": mfbo.Real(-1.0, 1.0)})


def _recipe(parzen=None, local=None, escape=True):
    """The default recipe with its Parzen step's settings ``parzen`` (False: no such step),
    its local step's ``local`` (False: none) and, unless not ``escape``, its plateau escape."""
    recipe = mfbo.get_recipe("mondrian")
    for kind, settings in ((ParzenStep, parzen), (LocalStep, local)):
        if settings is False:
            recipe = recipe.without(kind)
        elif settings:
            recipe = recipe.with_settings(kind, **settings)
    return recipe if escape else recipe.without(PlateauEscape)


def test_the_density_is_made_of_the_best_quarter():
    assert [n_good(m) for m in (1, 2, 3, 8, 9, 40, 100, 101, 1000)] == \
        [1, 2, 2, 2, 3, 10, 25, 25, MAX_GOOD]


def _truncated_normal_cdf(x, mu, sd):
    a, b = stats.norm.cdf((0 - mu) / sd), stats.norm.cdf((1 - mu) / sd)
    return np.clip((stats.norm.cdf((x - mu) / sd) - a) / (b - a), 0, 1)


def test_a_continuous_coordinate_follows_the_mixture_of_truncated_normals():
    # 8 observations: the best 2 (x = 0.2 and 0.3) make the density, with the prior
    X = np.array([[0.9], [0.2], [0.7], [0.3], [0.5], [0.05], [0.95], [0.6]])
    y = np.array([5.0, 0.0, 4.0, 1.0, 3.0, 6.0, 7.0, 2.0])
    draws = good_region_sample(X, y, [0], 40_000, np.random.default_rng(0))[:, 0]
    assert draws.min() >= 0 and draws.max() <= 1
    # kernel widths: the larger gap to a neighbour, the interval's ends included, at least
    # 1 / (m + 1) (0.2: max(0.2, 0.1) -> 1/3; 0.3: max(0.1, 0.7) = 0.7); the prior: N(0.5, 1)
    parts = [(0.2, 1 / 3), (0.3, 0.7), (0.5, 1.0)]

    def cdf(x):
        return sum(_truncated_normal_cdf(x, mu, sd) for mu, sd in parts) / 3
    assert stats.kstest(draws, cdf).pvalue > 1e-3
    # and not the density of the worst pair (a test that can fail)
    assert stats.kstest(draws, lambda x: (_truncated_normal_cdf(x, 0.9, 0.1) +
                                          _truncated_normal_cdf(x, 0.95, 0.1) +
                                          _truncated_normal_cdf(x, 0.5, 1.0)) / 3).pvalue < 1e-6


def test_coordinates_are_drawn_independently_and_categories_exactly():
    # two good points at opposite corners: a product of marginals also draws the other two
    # corners; the categorical coordinate takes a good point's level or, from the prior, any
    levels = np.array([0, 0, -4])
    X = np.array([[0.05, 0.05, 0.125], [0.95, 0.95, 0.625], [0.5, 0.5, 0.375],
                  [0.5, 0.4, 0.875], [0.4, 0.5, 0.375], [0.6, 0.6, 0.875],
                  [0.45, 0.55, 0.375], [0.55, 0.45, 0.875]])
    y = np.arange(8.0)
    U = good_region_sample(X, y, levels, 30_000, np.random.default_rng(1))
    low, high = U[:, :2] < 0.3, U[:, :2] > 0.7
    mixed = np.mean(low[:, 0] & high[:, 1])
    # the joint share is the product of the marginal ones (drawing both coordinates from the
    # same good point would make it a few times smaller)
    assert mixed == pytest.approx(low[:, 0].mean() * high[:, 1].mean(), abs=0.006)
    assert mixed > 0.06
    cat = snap(U, levels)[:, 2]
    share = {v: np.mean(cat == v) for v in (0.125, 0.375, 0.625, 0.875)}
    # good levels 1/3 + 1/12 each from the prior, the others 1/12
    assert share[0.125] == pytest.approx(5 / 12, abs=0.02)
    assert share[0.625] == pytest.approx(5 / 12, abs=0.02)
    assert share[0.375] == pytest.approx(1 / 12, abs=0.01)
    assert share[0.875] == pytest.approx(1 / 12, abs=0.01)


def test_a_parameter_s_density_is_made_of_the_good_points_where_it_is_active():
    # a conditional space's encoding (an inactive coordinate lies outside the cube): of the
    # best four of 16 points, the second coordinate is inactive in two and active (0.8, 0.9)
    # in two; the third is inactive in all four
    inactive = mfbo.Space.inactive_unit
    good = [[0.2, inactive, inactive], [0.3, inactive, inactive], [0.7, 0.8, inactive],
            [0.6, 0.9, inactive]]
    rest = np.random.default_rng(1).random((12, 3))
    X = np.concatenate([good, rest])
    y = np.arange(16.0)
    assert n_good(16) == 4
    draws = good_region_sample(X, y, [0, 0, 0], 40_000, np.random.default_rng(0))
    assert draws.min() >= 0 and draws.max() <= 1
    # the second coordinate: kernels at 0.8 and 0.9 (widths max(0.8, 0.1) and 0.1, at least
    # 1/3 with two points) and the prior, a third each; the inactive good points add
    # nothing (they made a spike at the cube's edge, 0.0, where they were drawn from)
    parts = [(0.8, 0.8), (0.9, 1 / 3), (0.5, 1.0)]

    def cdf(x):
        return sum(_truncated_normal_cdf(x, mu, sd) for mu, sd in parts) / 3
    assert stats.kstest(draws[:, 1], cdf).pvalue > 1e-3
    assert np.mean(draws[:, 1] == 0.0) == 0.0
    # the third: inactive in every good point, so the prior alone
    assert stats.kstest(draws[:, 2], lambda x: _truncated_normal_cdf(x, 0.5, 1.0)).pvalue > 1e-3


def test_a_categorical_parameter_inactive_in_every_good_point_is_uniform():
    inactive = mfbo.Space.inactive_unit
    X = np.array([[inactive, 0.1], [inactive, 0.2], [0.125, 0.9], [0.875, 0.8]])
    cat = snap(good_region_sample(X, np.arange(4.0), [-4, 0], 20_000,
                                  np.random.default_rng(2)), [-4, 0])[:, 0]
    for v in (0.125, 0.375, 0.625, 0.875):
        assert np.mean(cat == v) == pytest.approx(0.25, abs=0.015)


def test_the_sample_is_reproducible_and_leaves_its_input_alone():
    X = np.random.default_rng(0).random((10, 3))
    y = np.arange(10.0)[::-1].copy()
    X0, y0 = X.copy(), y.copy()
    a = good_region_sample(X, y, [0, 5, -3], 50, np.random.default_rng(4))
    b = good_region_sample(X, y, [0, 5, -3], 50, np.random.default_rng(4))
    assert np.array_equal(a, b) and np.array_equal(X, X0) and np.array_equal(y, y0)


@pytest.mark.parametrize("X, y, levels", [
    (np.zeros((0, 2)), np.zeros(0), [0, 0]),
    (np.zeros((3, 2)), np.zeros(2), [0, 0]),
    (np.zeros((3, 2)), np.zeros(3), [0]),
    (np.zeros(3), np.zeros(3), [0]),
])
def test_bad_observations_are_refused(X, y, levels):
    with pytest.raises(ValueError, match="X must be"):
        good_region_sample(X, y, levels, 5, np.random.default_rng(0))


def test_the_maximiser_can_score_extra_points_only():
    extra = np.array([[0.1, 0.1], [0.8, 0.3], [0.4, 0.9]])
    rng = np.random.default_rng(0)
    best = maximize_random_local(lambda U: -np.abs(U - [0.8, 0.3]).sum(axis=1), [0, 0], n=1,
                                 rng=rng, n_random=0, extra=extra, patience=0)
    assert np.array_equal(best, extra[[1]])


@pytest.mark.parametrize("fields, match", [({"every": -1}, r"ParzenStep\(every=\.\.\.\)"),
                                           ({"every": 1.5}, r"ParzenStep\(every=\.\.\.\)"),
                                           ({"every": True}, r"ParzenStep\(every=\.\.\.\)"),
                                           ({"n_candidates": 0},
                                            r"ParzenStep\(n_candidates=\.\.\.\)")])
def test_the_step_checks_its_settings(fields, match):
    with pytest.raises(ValueError, match=match):
        _recipe(parzen=fields)


def test_the_default_takes_a_parzen_step_every_second_proposal():
    step = mfbo.get_recipe("mondrian").step(ParzenStep)
    assert step.every == 2 and step.when_converged
    assert mfbo.Recipe(model=mfbo.get_recipe("mondrian").model).step(ParzenStep) is None
    # the number of points drawn matters only when steps are taken
    runs = [run_trials(mfbo.Optimizer(SPACE, surrogate=r, random_state=3), quad, 25)
            for r in (_recipe(parzen={"every": 0}),
                      _recipe(parzen={"every": 0, "n_candidates": 7}))]
    assert [t.params for t in runs[0].trials] == [t.params for t in runs[1].trials]


def test_a_parzen_step_is_the_acquisitions_best_of_the_drawn_points():
    # one candidate per step: every model-based proposal is that draw, made from proposal
    # i's own stream (no local quadratic steps or plateau escapes in this recipe)
    recipe = _recipe(parzen={"every": 1, "n_candidates": 1}, local=False, escape=False)
    opt = run_trials(mfbo.Optimizer(SPACE, surrogate=recipe, random_state=5, n_initial=6),
                     quad, 14)
    obs = opt.study.obs
    for i in range(6, 14):
        rng = opt.proposer._rng(i)
        rng.random()  # the random-interleaving coin
        drawn = good_region_sample(obs.X[:i], obs.y[:i], SPACE.levels, 1, rng)
        assert np.allclose(obs.X[i], SPACE.to_unit([SPACE.from_unit(drawn[0])[0]])[0])
    # with every second step (the default): the others are random points and searches
    half = run_trials(mfbo.Optimizer(SPACE, random_state=5, n_initial=6), quad, 14)
    base = run_trials(mfbo.Optimizer(SPACE, surrogate=_recipe(parzen={"every": 0}),
                                     random_state=5, n_initial=6), quad, 7)
    assert [t.params for t in half.trials[:7]] == [t.params for t in base.trials]
    assert half.trials[7].params != run_trials(base, quad, 1).trials[7].params


def test_candidate_sets_are_enumerated_as_before():
    grid = [{"x": x, "y": y} for x in np.linspace(-1, 1, 9) for y in np.linspace(-1, 1, 9)]
    runs = [run_trials(mfbo.Optimizer(SPACE, surrogate=r, random_state=1, candidates=grid),
                       quad, 20) for r in (_recipe(parzen={"every": 0}),
                                           _recipe(parzen={"every": 1}))]
    assert [t.params for t in runs[0].trials] == [t.params for t in runs[1].trials]


def test_a_study_with_parzen_steps_pickles_and_resumes(tmp_path):
    recipe = mfbo.get_recipe("mondrian")
    whole = run_trials(mfbo.Optimizer(SPACE, surrogate=recipe, random_state=7), quad, 24)
    part = run_trials(mfbo.Optimizer(SPACE, surrogate=recipe, random_state=7), quad, 15)
    part = run_trials(pickle.loads(pickle.dumps(part)), quad, 9)
    assert [t.params for t in part.trials] == [t.params for t in whole.trials]
    path = str(tmp_path / "s.db")
    first = run_trials(mfbo.Optimizer(SPACE, surrogate=recipe, random_state=7, storage=path),
                       quad, 15)
    first.close()
    # a resumed study refits its forest in one batch (another forest, so other proposals)
    # and goes on under the same recipe
    resumed = run_trials(mfbo.Optimizer(SPACE, surrogate=recipe, random_state=7,
                                        storage=path), quad, 9)
    assert resumed.recipe == recipe and len(resumed.trials) == 24
    assert [t.params for t in resumed.trials[:15]] == [t.params for t in whole.trials[:15]]


def test_batches_alternate_parzen_steps_with_searches_and_stay_distinct():
    opt = run_trials(mfbo.Optimizer(SPACE, random_state=11, n_initial=6), quad, 8)
    batch = opt.ask(6)  # pending trials: the constant liar's model scores the drawn points
    units = SPACE.to_unit([t.params for t in batch])
    assert len({tuple(np.round(u, 12)) for u in units}) == 6
    asked = SPACE.to_unit([t.params for t in opt.trials if t.state == "complete"])
    assert all(np.abs(asked - u).max(axis=1).min() > 0 for u in units)
    for t in batch:
        opt.tell(t, quad(**t.params))
    assert len(opt.trials) == 14


def _count_parzen_steps(monkeypatch, recipe, quadratic):
    """Run 24 trials under ``recipe`` with the local quadratic's minimiser replaced by
    ``quadratic(X, y)``; the proposal numbers at which a Parzen step drew its points."""
    import mfbo.proposal.steps.local as local
    import mfbo.proposal.steps.parzen as parzen

    steps = []
    draw = parzen.good_region_sample

    def counted(X, y, *args):
        steps.append(len(y))
        return draw(X, y, *args)
    monkeypatch.setattr(parzen, "good_region_sample", counted)
    monkeypatch.setattr(local, "quadratic_step", lambda X, y, levels, rng: quadratic(X, y))
    opt = run_trials(mfbo.Optimizer(SPACE, surrogate=recipe, random_state=2, n_initial=6),
                     quad, 24)
    asked = [tuple(SPACE.to_unit([t.params])[0]) for t in opt.trials]
    assert len(set(asked)) == len(asked)  # never a point twice
    return steps


def test_a_converged_local_step_becomes_a_parzen_step(monkeypatch):
    # local quadratic steps at proposals 8, 11, 14, ... (every third after 6 initial points)
    # and no periodic Parzen steps, so every Parzen step here comes from a converged slot
    recipe = _recipe(parzen={"every": 0, "when_converged": True}, local={"every": 3},
                     escape=False)
    at_best = lambda X, y: X[np.argmin(y)].copy()  # noqa: E731  (a point already asked)
    assert _count_parzen_steps(monkeypatch, recipe, at_best) == [8, 11, 14, 17, 20, 23]
    # off: the full maximiser takes those slots
    off = recipe.with_settings(ParzenStep, when_converged=False)
    assert _count_parzen_steps(monkeypatch, off, at_best) == []
    # a new minimiser is proposed as it is; no minimiser (too few points): the full maximiser
    fresh = lambda X, y: np.clip(X[np.argmin(y)] + 1e-3, 0, 1)  # noqa: E731
    assert _count_parzen_steps(monkeypatch, recipe, fresh) == []
    assert _count_parzen_steps(monkeypatch, recipe, lambda X, y: None) == []


def test_the_converged_switch_is_checked():
    with pytest.raises(TypeError, match=r"ParzenStep\(when_converged=\.\.\.\)"):
        _recipe(parzen={"when_converged": 1})


def test_per_parameter_densities_are_made_of_each_parameter_s_own_best_active_points():
    # the second coordinate is active only in the poor half of the points; per parameter its
    # density is made of the best of those (n_good(8) = 2: 0.8 and 0.82), not the prior
    inactive = mfbo.Space.inactive_unit
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.random(16), np.full(16, inactive)])
    X[8:, 1] = [0.8, 0.82, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    y = np.arange(16.0)
    own = good_region_sample(X, y, [0, 0], 20_000, np.random.default_rng(0), per_parameter=True)
    pooled = good_region_sample(X, y, [0, 0], 20_000, np.random.default_rng(0))
    # kernels at 0.8 and 0.82 (widths 0.8 and 1/3: the larger gap, at least 1/3) and the
    # prior, a third each; pooled, the prior alone (no best point has it active)
    parts = [(0.8, 0.8), (0.82, 1 / 3), (0.5, 1.0)]

    def cdf(x):
        return sum(_truncated_normal_cdf(x, mu, sd) for mu, sd in parts) / 3
    assert stats.kstest(own[:, 1], cdf).pvalue > 1e-3
    prior = lambda x: _truncated_normal_cdf(x, 0.5, 1.0)  # noqa: E731
    assert stats.kstest(pooled[:, 1], prior).pvalue > 1e-3
    assert stats.kstest(own[:, 1], prior).pvalue < 1e-6
    # the first coordinate, active everywhere, is drawn as before
    assert np.array_equal(own[:, 0], pooled[:, 0])


def test_per_parameter_draws_are_the_same_where_every_parameter_is_active():
    X = np.random.default_rng(0).random((30, 3))
    y = np.random.default_rng(1).random(30)
    for levels in ([0, 0, 0], [0, 5, -3]):
        a = good_region_sample(X, y, levels, 200, np.random.default_rng(4))
        b = good_region_sample(X, y, levels, 200, np.random.default_rng(4), per_parameter=True)
        assert np.array_equal(a, b)


def test_per_parameter_settings_are_checked():
    with pytest.raises(TypeError, match="per_parameter"):
        good_region_sample(np.zeros((3, 1)), np.zeros(3), [0], 5, np.random.default_rng(0),
                           per_parameter="yes")
    with pytest.raises(TypeError, match=r"ParzenStep\(per_parameter=\.\.\.\)"):
        ParzenStep(per_parameter=1)


TREE_SPACE = {"b": mfbo.Categorical([0, 1]),
              "u": mfbo.Real(0.0, 1.0, when={"b": 0}), "v": mfbo.Real(0.0, 1.0, when={"b": 1})}


def _tree_loss(b, u=None, v=None):
    return 0.3 + (u - 0.2) ** 2 if b == 0 else (v - 0.7) ** 2


def test_per_parameter_parzen_steps_are_active_allowed_and_repeat_after_a_reopen(tmp_path):
    from tests.support import check_reopen_repeats

    surrogate = _recipe(parzen={"every": 1, "per_parameter": True})
    space = mfbo.Space(TREE_SPACE)
    opt = run_trials(mfbo.Optimizer(TREE_SPACE, surrogate=surrogate, random_state=0,
                                    n_initial=4), lambda **p: _tree_loss(**p), 16)
    assert "parzen" in [t.origin for t in opt.trials]
    for t in opt.trials:
        space.validate(t.params)
        assert ("u" in t.params) == (t.params["b"] == 0) and ("v" in t.params) == (
            t.params["b"] == 1)
    check_reopen_repeats(TREE_SPACE, surrogate, lambda **p: _tree_loss(**p), 8, 2,
                         str(tmp_path / "s.db"), "parzen")


def test_per_parameter_parzen_steps_change_nothing_in_a_flat_space():
    plain = run_trials(mfbo.Optimizer(SPACE, surrogate=_recipe(), random_state=1,
                                      n_initial=4), quad, 14)
    pp = run_trials(mfbo.Optimizer(SPACE, surrogate=_recipe(parzen={"per_parameter": True}),
                                   random_state=1, n_initial=4), quad, 14)
    assert [t.params for t in pp.trials] == [t.params for t in plain.trials]
    assert "parzen" in [t.origin for t in pp.trials]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(0, 300),
       prior_share=st.floats(0.0, 1.0), redraws=st.sampled_from([0, 1, 3, _REDRAWS]))
def test_the_compiled_draws_are_numpy_s_and_leave_the_generator_where_numpy_does(
        seed, n, prior_share, redraws):
    setup = np.random.default_rng(seed)
    prior = setup.random(n) < prior_share
    mu = np.where(prior, 0.5, setup.uniform(-0.2, 1.2, n))  # (some centres outside)
    sd = np.where(prior, 1.0, setup.uniform(1e-3, 0.5, n))
    ours, theirs = np.random.default_rng(seed + 1), np.random.default_rng(seed + 1)
    out = np.full(n, np.nan)
    truncated_normal_into(mu, sd, ours, out, redraws)
    assert np.array_equal(out, truncated_normal(mu, sd, theirs, redraws))
    assert ours.random() == theirs.random()
    assert np.all((out >= 0.0) & (out <= 1.0))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), m=st.integers(1, 30), n=st.integers(1, 200),
       levels=st.lists(st.sampled_from([0, 0, 3, 5, -2, -4]), min_size=1, max_size=12),
       inactive=st.floats(0.0, 0.9))
def test_a_density_s_sample_is_the_numpy_draw(seed, m, n, levels, inactive):
    """The sample with the compiled draw equals the sample with numpy's in its place."""
    setup = np.random.default_rng(seed)
    levels = np.array(levels)
    X = setup.random((m, levels.size))
    X[setup.random(X.shape) < inactive] = -1.0  # (inactive coordinates: outside [0, 1])
    density = ParzenDensity(X, levels)
    ours, theirs = np.random.default_rng(seed + 1), np.random.default_rng(seed + 1)
    compiled = density.sample(n, ours)
    with pytest.MonkeyPatch.context() as patch:  # (as while a second process compiles it)
        patch.setattr(parzen, "_truncated_normal_draw", lambda: parzen._numpy_draw)
        assert np.array_equal(compiled, density.sample(n, theirs))
    assert ours.random() == theirs.random()


_FRESH = """
    import json
    import numpy as np
    from surrogates._core import compile_ahead
    from mfbo.proposal.steps import parzen
    from mfbo.proposal.steps._parzen_kernels import truncated_normal_into as kernel
    density = parzen.ParzenDensity(np.random.default_rng(0).random((6, 4)),
                                   np.array([0, 0, -3, 2]))
    rng = np.random.default_rng(1)
    used, out = [], []
    for i in range(40):
        if i == 30:
            compile_ahead.ready(kernel)
        used.append(parzen._truncated_normal_draw() is kernel)
        out.append(density.sample(50, rng).tolist())
    print(json.dumps({"used": used, "out": out,
                      "loaded": sum(kernel.stats.cache_hits.values()),
                      "compiled": sum(kernel.stats.cache_misses.values())}))
    """


def test_a_fresh_install_draws_with_numpy_until_the_second_process_has_compiled(
        python_run, tmp_path):
    runs = {}
    for ahead in ("1", "0"):
        cache = tmp_path / f"cache{ahead}"
        cache.mkdir()
        proc = python_run(_FRESH, 600, NUMBA_CACHE_DIR=str(cache),
                          SURROGATES_COMPILE_AHEAD=ahead)
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs[ahead] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert runs["1"]["out"] == runs["0"]["out"]  # the same numbers either way
    assert all(runs["0"]["used"]) and runs["0"]["compiled"] == 1  # compiled here, at once
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if (cores or 1) < 2:
        pytest.skip("one core: nothing is compiled ahead (checked: the same numbers)")
    used = runs["1"]["used"]
    assert not used[0] and all(used[30:])  # numpy's first, the compiled draw once it is there
    assert used == sorted(used)  # (never back to numpy's)
    assert runs["1"]["loaded"] == 1 and runs["1"]["compiled"] == 0
