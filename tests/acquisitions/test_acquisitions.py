"""Acquisition functions against Monte Carlo / closed forms, and the maximisers."""

import numpy as np
import pytest

from acquisitions import (enumerate_grid, expected_improvement, finite_size, ucb,
                          log_expected_improvement, lognormal_expected_improvement,
                          make_acquisition, maximize_over_candidates, maximize_random_local,
                          probability_of_improvement, row_keys, snap)


def test_ei_pi_match_monte_carlo():
    rng = np.random.default_rng(0)
    m, s, best, xi = 0.3, 0.7, 0.1, 0.05
    y = rng.normal(m, s, 2_000_000)
    ei_mc = np.maximum(best - xi - y, 0).mean()
    pi_mc = (y < best - xi).mean()
    assert expected_improvement(np.array([m]), np.array([s]), best, xi)[0] == pytest.approx(ei_mc, rel=5e-3)
    assert probability_of_improvement(np.array([m]), np.array([s]), best, xi)[0] == pytest.approx(pi_mc, abs=2e-3)


def test_log_ei_equals_log_of_ei_and_stays_finite_where_ei_underflows():
    m = np.linspace(-3, 3, 50)
    s = np.full(50, 0.8)
    np.testing.assert_allclose(log_expected_improvement(m, s, 0.0),
                               np.log(expected_improvement(m, s, 0.0)), rtol=1e-9)
    far = log_expected_improvement(np.array([60.0, 80.0]), np.array([1.0, 1.0]), 0.0)
    assert np.all(np.isfinite(far)) and far[0] > far[1]
    # asymptotics: log EI ~ -z^2/2 - log(sqrt(2 pi)) - 2 log|z| for z -> -inf
    z = -60.0
    assert far[0] == pytest.approx(-0.5 * z * z - 0.5 * np.log(2 * np.pi) - 2 * np.log(-z), abs=1e-3)


def test_log_ei_is_minus_inf_where_z_squared_overflows_and_nan_only_for_nan(recwarn):
    # a mean far above the best with a tiny spread: z about -1e200, where z * z overflows
    m = np.array([1e200, 1e160, 1e10, np.nan])
    s = np.array([1e-300, 1e-5, 1.0, 1.0])
    out = log_expected_improvement(m, s, 0.0)
    assert out[0] == -np.inf and out[1] == -np.inf
    assert np.isfinite(out[2]) and np.isnan(out[3])
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    # and the values below the overflow are those of the formula, unchanged
    z = -1e150
    assert log_expected_improvement(np.array([-z]), np.array([1.0]), 0.0)[0] == pytest.approx(
        -0.5 * z * z - 0.5 * np.log(2 * np.pi) - 2 * np.log(-z), rel=1e-12)


def test_lognormal_ei_matches_monte_carlo():
    rng = np.random.default_rng(1)
    m, s, best = -0.4, 0.5, -0.2
    y = rng.normal(m, s, 2_000_000)
    mc = np.maximum(np.exp(best) - np.exp(y), 0).mean()
    assert lognormal_expected_improvement(np.array([m]), np.array([s]), best)[0] == pytest.approx(mc, rel=5e-3)


def test_ucb_and_registry():
    # the negated loss's upper bound: minus the loss's lower bound mean - kappa std
    assert ucb(np.array([1.0]), np.array([2.0]), kappa=0.5)[0] == 0.0
    assert ucb(np.array([3.0]), np.array([1.0]), kappa=1.0)[0] == -(3.0 - 1.0)
    a = make_acquisition("UCB", kappa=2.0)
    assert a(np.array([1.0]), np.array([1.0]))[0] == 1.0
    assert make_acquisition("lcb", kappa=2.0)(np.array([1.0]), np.array([1.0]))[0] == 1.0
    import pickle
    b = pickle.loads(pickle.dumps(make_acquisition("ei", xi=0.1)))
    assert b.needs_best and b(np.array([0.0]), np.array([1.0]), 0.5)[0] > 0
    with pytest.raises(ValueError, match="acquisition"):
        make_acquisition("nope")
    with pytest.raises(ValueError, match="kappa"):
        make_acquisition("ucb", kappa=-1)
    with pytest.raises(TypeError, match="acquisition"):
        make_acquisition(3)


def test_enumeration_skips_unavailable_and_breaks_ties_randomly():
    C = np.linspace(0, 1, 11)[:, None]
    avail = np.ones(11, bool)
    avail[7] = False
    score = lambda U: -np.abs(U[:, 0] - 0.7)
    assert set(maximize_over_candidates(score, C, avail, 2, np.random.default_rng(0))) == {6, 8}
    flat = lambda U: np.zeros(len(U))
    picks = {int(maximize_over_candidates(flat, C, avail, 1, np.random.default_rng(s))[0]) for s in range(40)}
    assert len(picks) > 5 and 7 not in picks
    assert maximize_over_candidates(score, C, np.zeros(11, bool)).size == 0


def test_snap_and_grid():
    levels = np.array([0, 3, -2])
    U = snap(np.array([[1.3, 0.5, 0.9], [-0.1, 0.99, 0.1]]), levels)
    np.testing.assert_allclose(U, [[1.0, 0.5, 0.75], [0.0, 5 / 6, 0.25]])
    G = enumerate_grid(np.array([3, -2]))
    assert G.shape == (6, 2) and len(set(row_keys(G))) == 6
    assert finite_size(np.array([3, -2])) == 6 and finite_size(levels) == np.inf


def test_random_local_search_finds_the_optimum_and_respects_exclusions():
    rng = np.random.default_rng(3)
    target = np.array([0.123, 0.877, 0.5])
    score = lambda U: -np.sum((U[:, :2] - target[:2]) ** 2, axis=1) - np.abs(U[:, 2] - 0.5)
    levels = [0, 0, 5]
    best = maximize_random_local(score, levels, rng=rng, n_random=256)[0]
    assert np.abs(best[:2] - target[:2]).max() < 2e-3 and best[2] == 0.5
    # excluding the best discrete point forces the next one
    ex = row_keys(np.array([[best[0], best[1], 0.5]]))
    d = maximize_random_local(lambda U: -np.abs(U[:, 0] - 0.5), [-4], rng=rng, n_random=64,
                              exclude=row_keys(np.array([[0.375]])))
    assert d[0, 0] in (0.125, 0.625, 0.875) and d[0, 0] == 0.625
    assert ex  # keys are bytes


def test_plateau_ties_go_to_the_point_farthest_from_the_data():
    C = np.linspace(0, 1, 101)[:, None]
    avail = np.ones(101, bool)
    plateau = lambda U: np.where(U[:, 0] < 0.5, 1.0, 0.0)  # [0, 0.5) all tie for the best
    data = np.array([[0.05], [0.3]])
    for s in range(5):
        i = maximize_over_candidates(plateau, C, avail, 1, np.random.default_rng(s), far_from=data)
        assert np.isclose(C[i[0], 0], 0.49)
    # without data, ties are random
    picks = {int(maximize_over_candidates(plateau, C, avail, 1, np.random.default_rng(s))[0])
             for s in range(30)}
    assert len(picks) > 5 and max(picks) < 50


def test_a_plateau_near_the_largest_float_never_takes_an_unscored_row():
    """Scores of about -1.8e308 put the tie bound past the largest float; the rows scored
    -inf (forbidden or asked) must still come after every finite one, without a warning."""
    import warnings

    from acquisitions.maximizers import _top_unique

    top = np.finfo(float).max
    scores = np.array([-top, -np.inf, -top * (1 - 1e-12), -np.inf, -top])
    P = np.random.default_rng(0).random((5, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _top_unique(scores, P, set(), 3, np.random.default_rng(0), far_from=P[:1] + 0.5)
    assert sorted(got.tolist()) == [0, 2, 4]


def test_partial_selection_equals_a_full_sort():
    from acquisitions.maximizers import _top_unique

    rng = np.random.default_rng(0)
    for trial in range(20):
        N = int(rng.integers(1, 5000))
        s = np.round(rng.normal(size=N), 1)  # many exact ties
        P = rng.random((N, 2))
        excl = set(row_keys(P[rng.choice(N, size=min(N, 40), replace=False)]))
        n = int(rng.integers(1, 30))
        got = _top_unique(s, P, excl, n, np.random.default_rng(trial))
        keep = [i for i in range(N) if row_keys(P[i:i + 1])[0] not in excl]
        ref = sorted(keep, key=lambda i: -s[i])[:n]
        # same multiset of scores (ties may be broken differently), none excluded
        assert sorted(s[got]) == sorted(s[ref])
        assert not set(row_keys(P[got])) & excl


def test_joint_neighbourhood_moves_all_continuous_coordinates():
    from acquisitions.maximizers import _neighbours

    U = np.full((3, 3), 0.5)
    V, own = _neighbours(U, np.array([0, 0, 4]), np.random.default_rng(0), 0.1, 4, joint=True)
    moved = V != 0.5
    cont = moved[:, :2].all(axis=1)
    assert cont.sum() == 3 * 8 and np.all(moved[cont][:, 2] == False)  # noqa: E712
    assert np.bincount(own).tolist() == [10, 10, 10]  # 8 joint + 2 ordinal levels each
    one, _ = _neighbours(U, np.array([0, 0, 4]), np.random.default_rng(0), 0.1, 4)
    assert ((one != 0.5).sum(axis=1) == 1).all()
    with pytest.raises(ValueError, match="neighbourhood"):
        maximize_random_local(lambda U: U[:, 0], [0], neighbourhood="diagonal")


def test_local_search_stops_on_negligible_gains():
    """With ``min_improvement`` a search on a smooth slope stops after ``patience`` rounds of
    small gains; without it, it keeps climbing."""
    def counting(calls):
        def score(U):
            calls.append(len(U))
            return U.sum(axis=1)  # rises towards (1, 1): moves keep gaining until the corner
        return score

    rounds = {}
    for tol in (0.0, 1e9):
        calls = []
        maximize_random_local(counting(calls), [0, 0], rng=np.random.default_rng(0),
                              n_random=64, patience=3, max_rounds=40, min_improvement=tol,
                              neighbourhood="joint")
        rounds[tol] = len(calls) - 2  # the random points and the starts are scored once each
    assert rounds[1e9] == 3
    assert rounds[0.0] > 3


def test_search_patience_stops_all_searches_once_the_best_stops_rising():
    """A start already on the top plateau cannot be beaten; the other searches climb a slope
    towards it round after round.  With ``search_patience=k`` the local search ends after
    ``k`` rounds in which the best score did not rise, whatever the other searches still gain;
    the answer is a point of the top plateau either way."""
    def counting(calls):
        def score(U):
            calls.append(len(U))
            return np.where(U[:, 0] > 0.95, 1.0, 0.5 * U[:, 0])
        return score

    rounds, best = {}, {}
    for k in (0, 2):
        calls = []
        P = maximize_random_local(counting(calls), [0], rng=np.random.default_rng(0), n_random=16,
                                  starts=np.array([[0.99]]), patience=3, max_rounds=40,
                                  neighbourhood="joint", search_patience=k)
        rounds[k] = len(calls) - 2
        best[k] = P[0, 0]
    assert rounds[2] == 2
    assert rounds[0] > 2
    assert best[0] > 0.95 and best[2] > 0.95


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_search_patience_must_be_a_non_negative_integer(bad):
    with pytest.raises(ValueError, match="search_patience"):
        maximize_random_local(lambda U: U[:, 0], [0], n_random=8, search_patience=bad)


def test_a_categorical_of_many_choices_has_a_bounded_sample_of_neighbours():
    """A categorical coordinate of more than ``MAX_CHOICE_NEIGHBOURS + 1`` choices contributes
    that many other choices per row and round, drawn from the search's generator; one of fewer
    choices all of its other choices, as before."""
    from acquisitions.maximizers import MAX_CHOICE_NEIGHBOURS, _neighbours

    k = 50_000
    U = snap(np.random.default_rng(1).random((4, 2)), np.array([-k, 0]))
    V, own = _neighbours(U, np.array([-k, 0]), np.random.default_rng(0), 0.1, 4)
    cat = V[:, 0] != U[own, 0]
    assert np.all(V[cat, 1] == U[own[cat], 1])
    for i in range(4):
        others = V[cat & (own == i), 0]
        assert others.size == MAX_CHOICE_NEIGHBOURS == np.unique(others).size
        assert np.array_equal(snap(others[:, None], np.array([-k]))[:, 0], others)
    again, _ = _neighbours(U, np.array([-k, 0]), np.random.default_rng(0), 0.1, 4)
    assert np.array_equal(V, again)  # reproducible
    other, _ = _neighbours(U, np.array([-k, 0]), np.random.default_rng(2), 0.1, 4)
    assert not np.array_equal(V, other)  # a sample, not a fixed subset
    few = MAX_CHOICE_NEIGHBOURS + 1
    W, own = _neighbours(U, np.array([-few, 0]), np.random.default_rng(0), 0.1, 4)
    for i in range(4):
        assert np.unique(W[(W[:, 0] != U[i, 0]) & (own == i), 0]).size == few - 1


def test_local_search_over_a_categorical_of_many_choices_scores_few_points():
    """50,000 choices: a local search round scores a bounded sample of them, not all."""
    rows = []

    def score(U):
        rows.append(U.shape[0])
        return -np.abs(U[:, 0] - 0.123456) - (U[:, 1] - 0.5) ** 2

    best = maximize_random_local(score, [-50_000, 0], n=1, rng=np.random.default_rng(0),
                                 n_random=200, n_local=5, patience=3)
    assert sum(rows) < 20_000
    assert abs(best[0, 1] - 0.5) < 0.1
