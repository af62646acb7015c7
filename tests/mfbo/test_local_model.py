"""The local quadratic step and how a recipe uses it."""

import dataclasses

import numpy as np
import pytest

import mfbo
from mfbo.local_model import FULL_QUADRATIC_MAX_DIMS, quadratic_step
from tests.support import quad

SPACE = mfbo.Space({"x": mfbo.Real(-1.0, 1.0), "y": mfbo.Real(-1.0, 1.0)})


def _bowl(c, n, seed, centre=0.37, spread=0.2):
    rng = np.random.default_rng(seed)
    U = np.clip(centre + spread * rng.standard_normal((n, c)), 0, 1)
    return U, ((U - centre) ** 2).sum(axis=1) + 1.0


@pytest.mark.parametrize("c", [3, 5, 8])
def test_the_step_at_least_halves_a_bowls_gap_of_the_best_observation(c):
    # full quadratics up to FULL_QUADRATIC_MAX_DIMS, squares only beyond
    U, y = _bowl(c, 200, c)
    u = quadratic_step(U, y, [0] * c, np.random.default_rng(0))
    assert ((u - 0.37) ** 2).sum() < 0.5 * (y.min() - 1.0)


def test_the_step_stays_in_the_trust_box_and_the_unit_cube():
    # a loss falling towards a corner: the step goes there, no farther than the box spanned
    # by the observations it was fitted to
    c = 2
    rng = np.random.default_rng(3)
    U = 0.1 * rng.random((40, c))
    y = U.sum(axis=1)
    u = quadratic_step(U, y, [0] * c, np.random.default_rng(0))
    assert np.all((u >= 0) & (u <= 1))
    b = U[np.argmin(y)]
    p = 1 + c + c * (c + 1) // 2
    radius = np.sort(np.abs(U - b).max(axis=1))[2 * p - 1]
    assert np.abs(u - b).max() <= radius + 1e-12
    assert u.sum() < b.sum()  # downhill


def test_discrete_coordinates_keep_the_incumbents_values():
    U, y = _bowl(3, 60, 1)
    U[:, 2] = np.where(U[:, 2] > 0.4, 0.75, 0.25)  # a two-level coordinate
    b = U[np.argmin(y)]
    u = quadratic_step(U, y, [0, 0, -2], np.random.default_rng(0))
    assert u[2] == b[2]


def test_no_step_without_enough_observations_or_continuous_coordinates():
    # a full quadratic in 2-D has 6 coefficients, fitted to the 12 nearest observations, at
    # most half of them by default: 24 needed
    U, y = _bowl(2, 23, 0)
    assert quadratic_step(U, y, [0, 0], np.random.default_rng(0)) is None
    assert quadratic_step(U, y, [0, 0], np.random.default_rng(0), min_fraction=1) is not None
    U, y = _bowl(2, 24, 0)
    assert quadratic_step(U, y, [0, 0], np.random.default_rng(0)) is not None
    assert quadratic_step(U, y, [3, -2], np.random.default_rng(0)) is None
    assert quadratic_step(U[:0], y[:0], [0, 0], np.random.default_rng(0)) is None


def test_flat_losses_and_identical_points_give_a_point_or_none_never_nan():
    c = FULL_QUADRATIC_MAX_DIMS + 1
    U, _ = _bowl(c, 120, 0)
    u = quadratic_step(U, np.ones(120), [0] * c, np.random.default_rng(0))
    assert u is None or np.all(np.isfinite(u))
    assert quadratic_step(np.full((40, 2), 0.5), np.arange(40.0), [0, 0],
                          np.random.default_rng(0)) is None


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_recipe_refuses_a_bad_local_model_every(bad):
    with pytest.raises(ValueError, match="local_model_every"):
        dataclasses.replace(mfbo.get_recipe("mondrian"), local_model_every=bad)


def test_every_kth_model_proposal_is_the_quadratic_step():
    recipe = dataclasses.replace(mfbo.get_recipe("mondrian"), local_model_every=3)
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
