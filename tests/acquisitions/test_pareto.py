"""Pareto dominance, hypervolume and its improvement, Chebyshev scalarisation and the
probability of feasibility, against brute force, Monte Carlo and closed forms."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import norm

from acquisitions.pareto import (HypervolumeImprovement, chebyshev, hypervolume,
                                 hypervolume_improvement, log_probability_feasible, non_dominated)


def _brute_non_dominated(Y):
    n = len(Y)
    return np.array([not any(np.all(Y[j] <= Y[i]) and np.any(Y[j] < Y[i])
                             for j in range(n) if j != i) for i in range(n)])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 25), st.integers(1, 4), st.integers(0, 10_000))
def test_non_dominated_is_the_definition(n, k, seed):
    rng = np.random.default_rng(seed)
    Y = rng.integers(0, 4, size=(n, k)).astype(float)  # ties and repeats on purpose
    assert np.array_equal(non_dominated(Y), _brute_non_dominated(Y))


def _monte_carlo(Y, ref, n=300_000, seed=0):
    rng = np.random.default_rng(seed)
    lo = Y.min(axis=0)
    S = lo + rng.random((n, len(ref))) * (ref - lo)
    dominated = np.zeros(n, dtype=bool)
    for y in Y:
        dominated |= np.all(y <= S, axis=1)
    return dominated.mean() * np.prod(ref - lo)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_hypervolume_matches_monte_carlo(k):
    rng = np.random.default_rng(k)
    Y = rng.random((12, k))
    ref = np.full(k, 1.05)
    exact = hypervolume(Y, ref)
    mc = _monte_carlo(Y, ref)
    assert exact == pytest.approx(mc, rel=0.02)


def test_hypervolume_closed_forms():
    assert hypervolume([[0.2]], [1.0]) == pytest.approx(0.8)
    assert hypervolume([[0.0, 0.0]], [1.0, 2.0]) == pytest.approx(2.0)
    # two boxes overlapping in a square: 0.5 + 0.5 - 0.25
    assert hypervolume([[0.0, 0.5], [0.5, 0.0]], [1.0, 1.0]) == pytest.approx(0.75)
    # a point outside the reference box adds nothing, a dominated one nothing
    assert hypervolume([[0.0, 0.5], [1.5, 0.0], [0.2, 0.7]], [1, 1]) == pytest.approx(0.5)
    assert hypervolume(np.empty((0, 2)), [1, 1]) == 0.0


@pytest.mark.parametrize("k", [2, 3])
def test_hypervolume_improvement_is_the_difference_of_hypervolumes(k):
    rng = np.random.default_rng(10 + k)
    F = rng.random((9, k))
    ref = np.full(k, 1.1)
    P = rng.random((40, k)) * 1.2 - 0.05
    got = hypervolume_improvement(F, ref, P)
    want = [hypervolume(np.vstack([F, p]), ref) - hypervolume(F, ref) for p in P]
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert np.all(got >= 0)
    # a point of the front adds nothing; against an empty front, the box below ref
    assert hypervolume_improvement(F, ref, F[non_dominated(F)]).max() == pytest.approx(0)
    np.testing.assert_allclose(hypervolume_improvement(np.empty((0, k)), ref, P[:3]),
                               [np.prod(np.clip(ref - p, 0, None)) for p in P[:3]])


def test_every_pareto_point_minimises_a_chebyshev_scalarisation():
    rng = np.random.default_rng(3)
    Y = rng.random((30, 2))
    front = non_dominated(Y)
    Z = (Y - Y.min(0)) / np.ptp(Y, axis=0)
    winners = {int(np.argmin(chebyshev(Z, [w, 1 - w]))) for w in np.linspace(0.001, 0.999,
                                                                             2000)}
    assert winners <= set(np.flatnonzero(front))  # only front points ever win
    assert len(winners) >= 0.6 * front.sum()


def test_log_probability_feasible_is_the_normal_cdf():
    mean = np.array([[0.5, -1.0], [2.0, 0.0]])
    std = np.array([[1.0, 2.0], [0.5, 1.0]])
    want = norm.logcdf(-mean / std).sum(axis=1)
    np.testing.assert_allclose(log_probability_feasible(mean, std), want)
    # a zero std is certain: met (0) or violated (-inf)
    got = log_probability_feasible(np.array([[-1.0], [1.0]]), np.zeros((2, 1)))
    assert got[0] == 0.0 and got[1] == -np.inf
    # far beyond the threshold still ranks (no underflow to -inf)
    far = log_probability_feasible(np.array([[40.0], [50.0]]), np.ones((2, 1)))
    assert np.all(np.isfinite(far)) and far[0] > far[1]


def test_the_improvements_of_many_points_are_each_point_s_own():
    # each row's improvement is the same number, bit for bit, whatever rows come with it
    rng = np.random.default_rng(3)
    front = rng.random((30, 2))
    front = front[non_dominated(front)]
    ref = np.array([1.1, 1.1])
    P = rng.random((4000, 2)) * 1.3 - 0.1
    whole = hypervolume_improvement(front, ref, P)
    for a in range(0, 4000, 700):
        np.testing.assert_array_equal(hypervolume_improvement(front, ref, P[a:a + 700]),
                                      whole[a:a + 700])
    np.testing.assert_array_equal([hypervolume_improvement(front, ref, p)[0] for p in P[:50]],
                                  whole[:50])


@pytest.mark.parametrize("k", [2, 3])
def test_one_front_s_improvement_function_is_the_improvement(k):
    rng = np.random.default_rng(k)
    front, ref = rng.random((12, k)), np.full(k, 1.1)
    P = rng.random((40, k)) * 1.3 - 0.1
    improvement = HypervolumeImprovement(front, ref)
    np.testing.assert_array_equal(improvement(P), hypervolume_improvement(front, ref, P))
    base = hypervolume(front, ref)
    np.testing.assert_allclose(improvement(P[:5]), [hypervolume(np.vstack([front, p]), ref) -
                                                    base for p in P[:5]], atol=1e-12)


def _per_point_improvement(front, ref, P):
    """Each row's improvement as the difference of two exact hypervolumes."""
    base = hypervolume(front, ref)
    return np.array([hypervolume(np.vstack([front, p]), ref) - base for p in P])


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n_front", [0, 1, 5, 40])
def test_three_losses_improvement_is_the_difference_of_hypervolumes(seed, n_front):
    rng = np.random.default_rng(100 + seed)
    ref = np.array([1.1, 1.0, 1.2])
    # a front on a grid (ties in every loss), some points repeated, some on the reference
    F = np.round(rng.random((n_front, 3)) * 8) / 8 if seed % 2 else rng.random((n_front, 3))
    if n_front:
        F = np.vstack([F, F[:2], np.minimum(F[:1] + [0.0, 0.0, 1.0], ref)])
    P = np.round(rng.random((300, 3)) * 10) / 8 if seed % 2 else rng.random((300, 3)) * 1.3
    P = np.vstack([P, F, F + [0.0, 0.0, 0.01], F - [0.01, 0.0, 0.0], ref, ref - 0.5,
                   [[-5.0, 0.5, 0.5], [0.5, 0.5, 1.2]]])
    got = HypervolumeImprovement(F, ref)(P)
    np.testing.assert_allclose(got, _per_point_improvement(F, ref, P), rtol=1e-10,
                               atol=1e-12)
    assert np.all(got >= 0)
    # points the front (or the reference) bounds add exactly nothing
    inside = F[np.all(F < ref, axis=1)]
    if inside.shape[0]:
        assert np.all(HypervolumeImprovement(F, ref)(inside) == 0.0)
    assert np.all(HypervolumeImprovement(F, ref)(P[np.any(P >= ref, axis=1)]) == 0.0)


def test_three_losses_improvement_matches_monte_carlo():
    rng = np.random.default_rng(7)
    front, ref = rng.random((25, 3)), np.ones(3)
    P = rng.random((6, 3)) * 0.8
    got = HypervolumeImprovement(front, ref)(P)
    S = rng.random((400_000, 3))
    free = ~np.zeros(len(S), dtype=bool)
    for f in front[non_dominated(front)]:
        free &= ~np.all(S >= f, axis=1)
    for p, g in zip(P, got):
        mc = np.mean(free & np.all(S >= p, axis=1))
        assert g == pytest.approx(mc, abs=4e-3)


def test_three_losses_improvements_of_many_points_are_each_point_s_own():
    rng = np.random.default_rng(4)
    front = rng.random((60, 3))
    ref = np.full(3, 1.1)
    P = rng.random((9000, 3)) * 1.3 - 0.1
    improvement = HypervolumeImprovement(front, ref)
    whole = improvement(P)
    for a in range(0, 9000, 1700):
        np.testing.assert_array_equal(improvement(P[a:a + 1700]), whole[a:a + 1700])
    np.testing.assert_array_equal([improvement(p)[0] for p in P[:30]], whole[:30])
