"""The local models (quadratic, linear and isotropic steps) of the local step."""

import numpy as np
import pytest

import mfbo
from acquisitions import snap
from mfbo.proposal import LocalStep, PlateauEscape
from mfbo.proposal.steps.local_models import (FULL_QUADRATIC_MAX_DIMS, MIN_ORDINAL_LEVELS,
                                              _isotropic_minimiser, isotropic_step, linear_step,
                                              ordinal_as_continuous, quadratic_step)
from tests.support import quad, run_trials


SPACE = mfbo.Space({"x": mfbo.Real(-1.0, 1.0), "y": mfbo.Real(-1.0, 1.0)})


def _local(**settings):
    """The default recipe with its local step's ``settings`` changed."""
    return mfbo.get_recipe("mondrian").with_settings(LocalStep, **settings)


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


def _plane(slopes, n, seed):
    rng = np.random.default_rng(seed)
    U = 0.3 + 0.4 * rng.random((n, len(slopes)))
    return U, U @ np.asarray(slopes, dtype=float) + 5.0


def test_the_linear_step_goes_to_the_trust_box_corner_its_slope_descends_to():
    # slopes of either sign and a flat coordinate; 4 coordinates: a plane of 5 coefficients
    # fitted to the 10 nearest of the 24 observations
    U, y = _plane([1.0, -2.0, 0.0, 0.5], 24, 0)
    b = U[np.argmin(y)]
    d = np.abs(U - b).max(axis=1)
    radius = np.sort(d)[9]
    u = linear_step(U, y, [0] * 4)
    assert u[0] == pytest.approx(max(0.0, b[0] - radius))
    assert u[1] == pytest.approx(min(1.0, b[1] + radius))
    assert u[3] == pytest.approx(max(0.0, b[3] - radius))
    # the flat coordinate: its fitted slope is ~0 but not exactly, so it goes to a side too;
    # the loss does not care, the point stays in the box and the unit cube
    assert abs(u[2] - b[2]) <= radius + 1e-12 and 0 <= u[2] <= 1
    assert u @ [1.0, -2.0, 0.0, 0.5] < b @ [1.0, -2.0, 0.0, 0.5]  # downhill


def test_the_linear_step_reaches_a_bound_and_keeps_discrete_coordinates():
    rng = np.random.default_rng(1)
    U = np.column_stack([0.05 * rng.random(30), rng.random(30),
                         np.where(rng.random(30) > 0.5, 0.75, 0.25)])
    y = U[:, 0] - U[:, 1]
    b = U[np.argmin(y)]
    u = linear_step(U, y, [0, 0, -2])
    assert u[0] == 0.0  # the trust box reaches past the bound: clipped to it
    assert u[2] == b[2]
    assert np.all((u >= 0) & (u <= 1))


def test_no_linear_step_without_enough_observations_or_continuous_coordinates():
    # a plane in 2-D has 3 coefficients, fitted to the 6 nearest: 12 observations needed
    U, y = _plane([1.0, 1.0], 11, 2)
    assert linear_step(U, y, [0, 0]) is None
    assert linear_step(U, y, [0, 0], min_fraction=1) is not None
    U, y = _plane([1.0, 1.0], 12, 2)
    assert linear_step(U, y, [0, 0]) is not None
    assert linear_step(U, y, [4, -3]) is None
    assert linear_step(U[:0], y[:0], [0, 0]) is None
    assert linear_step(np.full((20, 2), 0.5), np.arange(20.0), [0, 0]) is None


def test_a_linear_step_where_the_quadratic_has_too_few_observations():
    # the plane's slots: proposals 2, 5, 8, ... after the initial design, while fewer than
    # 24 observations (the quadratic's need in 2-D), from 12 on (the plane's)
    recipe = _local(every=3, linear=True).without(PlateauEscape)
    opt = mfbo.Optimizer(SPACE, surrogate=recipe, random_state=4)
    n0 = recipe.initial_size(len(SPACE))
    linear, quadratic = [], []
    for i in range(n0 + 24):
        t = opt.ask()
        k = i - n0
        if k >= 0 and k % 3 == 2:
            obs = opt.study.obs
            rng = opt.proposer._rng(i)
            rng.random()  # the draw that decides on random interleaving
            got = SPACE.to_unit([t.params])[0]
            if i < 24:
                expect = linear_step(obs.X, obs.y, SPACE.levels)
                linear.append(i >= 12 and np.allclose(got, expect, atol=1e-9))
            else:
                expect = quadratic_step(obs.X, obs.y, SPACE.levels, rng)
                quadratic.append(np.allclose(got, expect, atol=1e-9))
        opt.tell(t, quad(**t.params))
    assert len(linear) >= 4 and all(linear) and quadratic and all(quadratic)
    # without the plane, the same run up to its first slot, then other proposals
    plain_recipe = recipe.with_settings(LocalStep, linear=False)
    plain = run_trials(mfbo.Optimizer(SPACE, surrogate=plain_recipe, random_state=4), quad,
                       n0 + 3)
    assert [t.params for t in plain.trials[:n0 + 2]] == [t.params for t in opt.trials[:n0 + 2]]
    assert plain.trials[n0 + 2].params != opt.trials[n0 + 2].params


def test_ordinal_as_continuous_frees_integers_of_five_levels_or_more_only():
    levels = np.array([0, 2, MIN_ORDINAL_LEVELS - 1, MIN_ORDINAL_LEVELS, 21, -3, -7])
    out = ordinal_as_continuous(levels)
    assert out.tolist() == [0, 2, MIN_ORDINAL_LEVELS - 1, 0, 0, -3, -7]
    assert levels.tolist()[3] == MIN_ORDINAL_LEVELS  # the caller's levels are not changed


def test_a_quadratic_with_the_integers_moves_them_towards_the_bowls_centre():
    # a bowl in one real and one integer of 21 levels (-10..10) centred at (0.37, 3): the
    # quadratic of the real alone keeps the incumbent's integer, the wider one moves it
    space = mfbo.Space({"x": mfbo.Real(0.0, 1.0), "z": mfbo.Integer(-10, 10)})
    rng = np.random.default_rng(5)
    rows = [{"x": float(x), "z": int(z)} for x, z in
            zip(rng.uniform(0.2, 0.6, 60), rng.integers(-4, 2, 60))]
    U = space.to_unit(rows)
    y = np.array([(r["x"] - 0.37) ** 2 + 0.01 * (r["z"] - 3) ** 2 for r in rows])
    levels = space.levels
    best = rows[int(np.argmin(y))]
    narrow = space.from_unit(quadratic_step(U, y, levels, np.random.default_rng(0))[None])[0]
    wide_u = quadratic_step(U, y, ordinal_as_continuous(levels), np.random.default_rng(0))
    wide = space.from_unit(snap(wide_u[None], levels))[0]
    assert narrow["z"] == best["z"]
    assert abs(wide["z"] - 3) < abs(best["z"] - 3)


# -- the isotropic quadratic: one curvature, from 2 (c + 2) observations ---------------------
def test_the_isotropic_step_heads_for_a_round_bowls_centre_from_few_observations():
    # ten coordinates: 12 coefficients, fitted here to all 24 observations (a full quadratic
    # would need 66 coefficients, a diagonal one 21)
    c = 10
    rng = np.random.default_rng(4)
    centre = 0.3 + 0.4 * rng.random(c)
    U = rng.random((24, c))
    y = np.sqrt(((U - centre) ** 2).sum(axis=1))  # a cone, as Ackley's far from its centre
    u = isotropic_step(U, y, [0] * c)
    gap = np.linalg.norm(U[np.argmin(y)] - centre)
    assert np.linalg.norm(u - centre) < 0.5 * gap


def test_no_isotropic_step_without_enough_observations_or_continuous_coordinates():
    U, y = _bowl(3, 2 * (3 + 2), 0)
    assert isotropic_step(U, y, [0, 0, 0]) is not None
    assert isotropic_step(U[:-1], y[:-1], [0, 0, 0]) is None
    assert isotropic_step(U, y, [0, 0, 0], min_fraction=0.5) is None
    assert isotropic_step(U, y, [-2, 3, 4]) is None


def test_the_isotropic_step_keeps_discrete_coordinates_and_stays_in_the_box():
    U, y = _bowl(4, 40, 2)
    U[:, 3] = np.where(U[:, 3] > 0.4, 0.75, 0.25)  # a two-level coordinate
    b = U[np.argmin(y)]
    u = isotropic_step(U, y, [0, 0, 0, -2])
    assert u[3] == b[3]
    assert np.all((u >= 0) & (u <= 1))
    radius = np.sort(np.abs(U[:, :3] - b[:3]).max(axis=1))[2 * (3 + 2) - 1]
    assert np.abs(u[:3] - b[:3]).max() <= radius + 1e-12


def test_if_curved_the_isotropic_step_leaves_a_sloping_loss_to_the_plane():
    # a loss falling linearly to a corner: a plane predicts it as well as any bowl, so no
    # isotropic step; a round bowl's curvature is real, so there is one
    c = 6
    rng = np.random.default_rng(7)
    U = rng.random((2 * (c + 2), c))
    assert isotropic_step(U, U.sum(axis=1) + 1.0, [0] * c, if_curved=True) is None
    assert isotropic_step(U, U.sum(axis=1) + 1.0, [0] * c) is not None
    bowl = np.sqrt(((U - 0.45) ** 2).sum(axis=1))
    u = isotropic_step(U, bowl, [0] * c, if_curved=True)
    assert u is not None and np.array_equal(u, isotropic_step(U, bowl, [0] * c))


@pytest.mark.parametrize("seed", range(6))
def test_the_isotropic_minimiser_is_exact_coordinate_by_coordinate(seed):
    # b.z + k |z|^2 is a sum of one-dimensional quadratics: brute force on each range
    rng = np.random.default_rng(seed)
    b, k = rng.normal(size=5), rng.normal()
    lo, hi = -rng.random(5), rng.random(5)
    z = _isotropic_minimiser(b, k, lo, hi)
    assert np.all((z >= lo) & (z <= hi))
    for i in range(5):
        grid = np.linspace(lo[i], hi[i], 10_001)
        assert b[i] * z[i] + k * z[i] ** 2 <= (b[i] * grid + k * grid ** 2).min() + 1e-12
    assert _isotropic_minimiser(np.zeros(2), 0.0, -np.ones(2), np.ones(2)).tolist() == [0, 0]
