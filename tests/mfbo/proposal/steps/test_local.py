"""The local step (LocalStep) as a recipe uses it: its settings checked, every k-th model
proposal, and runs that its linear, integer and isotropic variants take closer to the minimum."""

import numpy as np
import pytest

import mfbo
from mfbo.proposal import LocalStep, PlateauEscape
from mfbo.proposal.steps.local_models import quadratic_step
from tests.mfbo.proposal.steps.test_local_models import SPACE, _local
from tests.support import quad, run_trials


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_recipe_refuses_a_bad_local_model_every(bad):
    with pytest.raises(ValueError, match=r"LocalStep\(every=\.\.\.\)"):
        _local(every=bad)


def test_every_kth_model_proposal_is_the_quadratic_step():
    recipe = _local(every=3)
    opt = mfbo.Optimizer(SPACE, surrogate=recipe, random_state=0)
    n0 = recipe.initial_size(len(SPACE))
    steps = []
    for i in range(n0 + 30):
        t = opt.ask()
        k = i - n0
        if k >= 0 and k % 3 == 2:
            study = opt.study
            rng = opt.proposer._rng(i)
            rng.random()  # the draw that decides on random interleaving
            expect = quadratic_step(study.obs.X, study.obs.y, SPACE.levels, rng)
            if expect is not None:
                steps.append(np.allclose(SPACE.to_unit([t.params])[0], expect, atol=1e-9))
        opt.tell(t, quad(**t.params))
    assert steps and all(steps)


@pytest.mark.parametrize("bad", [1, None, "yes"])
def test_recipe_refuses_a_bad_local_linear(bad):
    with pytest.raises(TypeError, match=r"LocalStep\(linear=\.\.\.\)"):
        _local(linear=bad)


def _corner(**p):
    """Lowest (0) at the corner (0, 0, 0, 0, 1, 1) of [0, 1]^6, flat (3) where the sum is
    above 3: a loss lowest at bounds, as a decision tree's error often is."""
    return min(p["a"] + p["b"] + p["c"] + p["d"] + (1 - p["e"]) + (1 - p["f"]), 3.0)


def test_the_linear_steps_take_a_run_to_a_corner_the_forest_alone_misses():
    space = mfbo.Space({k: mfbo.Real(0.0, 1.0) for k in "abcdef"})
    best = {}
    for on in (False, True):
        recipe = _local(linear=on)
        best[on] = [min(t.value for t in run_trials(
            mfbo.Optimizer(space, surrogate=recipe, random_state=s), _corner, 50).trials)
            for s in range(3)]
    assert max(best[True]) == 0.0
    assert min(best[False]) > 0.1


def _int_bowl(x, z1, z2):
    return (x - 0.3) ** 2 + 0.02 * ((z1 - 4) ** 2 + (z2 + 2) ** 2)


def test_local_integers_is_the_plain_recipe_until_its_quadratic_can_be_fitted():
    # one real and two integers: the wider quadratic (10 coefficients) needs 40 observations,
    # the real's alone (3) needs 12; before 40 the runs are identical, after they part
    space = mfbo.Space({"x": mfbo.Real(-1.0, 1.0), "z1": mfbo.Integer(-10, 10),
                        "z2": mfbo.Integer(-10, 10)})
    base = mfbo.get_recipe("mondrian").without(PlateauEscape)
    runs = [run_trials(mfbo.Optimizer(space, surrogate=base.with_settings(LocalStep, integers=on),
                                      random_state=2), _int_bowl, 60) for on in (False, True)]
    params = [[t.params for t in r.trials] for r in runs]
    assert params[0][:40] == params[1][:40]
    assert params[0] != params[1]


def test_local_integers_changes_nothing_without_an_integer_of_five_levels():
    space = mfbo.Space({"x": mfbo.Real(-1.0, 1.0), "y": mfbo.Real(-1.0, 1.0),
                        "k": mfbo.Integer(1, 4), "c": mfbo.Categorical(["a", "b", "c"])})

    def f(x, y, k, c):
        return quad(x, y) + 0.1 * k + (c == "b")
    runs = [run_trials(mfbo.Optimizer(space, surrogate=_local(integers=on), random_state=3),
                       f, 45)
        for on in (False, True)]
    assert [t.params for t in runs[0].trials] == [t.params for t in runs[1].trials]


@pytest.mark.parametrize("bad", [1, None, "yes"])
def test_recipe_refuses_a_bad_local_integers(bad):
    with pytest.raises(TypeError, match=r"LocalStep\(integers=\.\.\.\)"):
        _local(integers=bad)


_ROUND = mfbo.Space({**{f"x{i}": mfbo.Real(-1.0, 1.0) for i in range(5)},
                     "z1": mfbo.Integer(-10, 10), "z2": mfbo.Integer(-10, 10)})


def _round_bowl(**p):
    # centred at 0.4 in the reals and at 4 (0.4 of the range) in the integers
    return float(np.sqrt(sum((p[f"x{i}"] - 0.4) ** 2 for i in range(5))
                         + ((p["z1"] - 4) / 10) ** 2 + ((p["z2"] - 4) / 10) ** 2))


@pytest.mark.parametrize("rule", ["if-integers", "if-curved"])
def test_the_isotropic_steps_bring_a_run_closer_to_a_round_bowls_centre(rule):
    # five reals and two integers, 60 evaluations: the diagonal quadratic of the reals needs
    # 44 observations (and keeps the integers), the isotropic one of all seven coordinates 18
    best = {on: [] for on in (False, rule)}
    for seed in range(3):
        for on in best:
            opt = mfbo.Optimizer(_ROUND, surrogate=_local(isotropic=on), n_initial=10,
                                 random_state=seed)
            best[on].append(min(t.value for t in run_trials(opt, _round_bowl, 60).trials))
    assert np.mean(best[rule]) < 0.6 * np.mean(best[False])


def test_local_isotropic_if_integers_changes_nothing_without_an_integer_of_five_levels():
    space = mfbo.Space({**{f"x{i}": mfbo.Real(-1.0, 1.0) for i in range(6)},
                        "k": mfbo.Integer(1, 4), "c": mfbo.Categorical(["a", "b", "c"])})

    def f(k, c, **x):
        return _round_bowl(**x, z1=4, z2=4) + 0.1 * k + (c == "b")
    runs = {on: run_trials(mfbo.Optimizer(space, surrogate=_local(isotropic=on), n_initial=10,
                                          random_state=3), f, 40)
        for on in (False, "if-integers", "if-curved", True)}
    params = {on: [t.params for t in r.trials] for on, r in runs.items()}
    assert params[False] == params["if-integers"] == params["if-curved"]
    assert params[False] != params[True]  # True takes the isotropic step in any space


@pytest.mark.parametrize("bad", [1, None, "yes"])
def test_recipe_refuses_a_bad_local_isotropic(bad):
    with pytest.raises(TypeError, match=r"LocalStep\(isotropic=\.\.\.\)"):
        _local(isotropic=bad)


def test_same_cell_keeps_the_observations_of_the_best_ones_categorical_values():
    from mfbo.proposal.steps.local import same_cell

    levels = np.array([0, 3, -2, -3])  # a real, an ordinal, two categoricals
    X = np.array([[0.1, 0.0, 0.25, 0.5], [0.2, 0.5, 0.25, 0.5], [0.3, 1.0, 0.75, 0.5],
                  [0.4, 0.5, 0.25, 0.1], [0.9, 1.0, 0.25, 0.5]])
    y = np.array([3.0, 1.0, 0.5, 2.0, 4.0])
    Xc, yc = same_cell(X, y, levels)  # the best is row 2: categoricals (0.75, 0.5)
    assert np.array_equal(Xc, X[[2]]) and np.array_equal(yc, y[[2]])
    y[2] = 9.0  # now row 1: rows 0, 1 and 4 share its categoricals (the ordinal may differ)
    Xc, yc = same_cell(X, y, levels)
    assert np.array_equal(Xc, X[[0, 1, 4]]) and np.array_equal(yc, y[[0, 1, 4]])
    Xn, yn = same_cell(X, y, np.array([0, 3, 0, 0]))  # no categorical: every row
    assert Xn is X and yn is y


def _cells(x, y, c):
    # a bowl per categorical value, centred elsewhere in each: a quadratic mixing the cells
    # fits neither
    cx = {"a": 0.5, "b": -0.5, "c": 0.0}[c]
    return (x - cx) ** 2 + (y + cx) ** 2 + {"a": 0.0, "b": 0.3, "c": 0.6}[c]


def test_cell_local_steps_fit_the_incumbents_cell_only_and_keep_its_categoricals():
    space = mfbo.Space({"x": mfbo.Real(-1.0, 1.0), "y": mfbo.Real(-1.0, 1.0),
                        "c": mfbo.Categorical(["a", "b", "c"])})
    recipe = _local(cell=True)
    opt = mfbo.Optimizer(space, surrogate=recipe, random_state=1)
    checked = 0
    for _ in range(60):
        study = opt.study
        X, y = study.obs.X.copy(), study.obs.y.copy()
        t = opt.ask()
        if t.origin == "local":
            best = X[int(np.argmin(y))]
            u = space.to_unit([t.params])[0]
            assert u[2] == best[2]  # the incumbent's category
            rng = opt.proposer._rng(len(opt.trials) - 1)
            rng.random()
            same = X[:, 2] == best[2]
            expect = quadratic_step(X[same], y[same], space.levels, rng)
            if expect is not None:
                assert np.allclose(u, expect, atol=1e-9)
                checked += 1
        opt.tell(t, _cells(**t.params))
    assert checked >= 3


def test_cell_local_steps_change_nothing_without_a_categorical_parameter():
    runs = [run_trials(mfbo.Optimizer(SPACE, surrogate=_local(cell=on), random_state=4),
                       quad, 40) for on in (False, True)]
    assert [t.params for t in runs[0].trials] == [t.params for t in runs[1].trials]


@pytest.mark.parametrize("bad", [1, None, "yes"])
def test_recipe_refuses_a_bad_local_cell(bad):
    with pytest.raises(TypeError, match=r"LocalStep\(cell=\.\.\.\)"):
        _local(cell=bad)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_recipe_refuses_a_bad_local_patience(bad):
    with pytest.raises(ValueError, match=r"LocalStep\(patience=\.\.\.\)"):
        _local(patience=bad)


def _jagged(x, y):
    # a bowl under a fine ripple: the local quadratic's steps mostly fail
    return quad(x, y) + 0.3 * abs(np.sin(40 * x) * np.sin(37 * y))


@pytest.mark.parametrize("patience", [1, 2])
def test_a_patient_local_step_passes_after_its_failures_until_a_new_best(patience):
    opt = mfbo.Optimizer(SPACE, surrogate=_local(patience=patience), random_state=0)
    step = LocalStep(patience=patience)
    passed = 0
    for _ in range(80):
        failures = step.failures(opt.study)
        t = opt.ask()
        assert not (t.origin == "local" and failures >= patience)
        passed += failures >= patience
        opt.tell(t, _jagged(**t.params))
    y, origins = opt.study.obs.y, opt.study.obs_origins
    assert passed and "local" in origins
    # by hand: local trials after the best
    assert step.failures(opt.study) == origins[int(np.argmin(y)) + 1:].count("local")
    # without patience the same run keeps making local proposals after failures
    plain = run_trials(mfbo.Optimizer(SPACE, surrogate=_local(), random_state=0), _jagged, 80)
    assert plain.study.obs_origins.count("local") > origins.count("local")
