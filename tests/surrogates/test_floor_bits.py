"""Box distances summed over the off-floor dimensions only (the inactive coordinates of a
conditional space sit on the floor): the same predictions, bit for bit, as summing every
dimension, whatever the data, the queries and the online updates in between."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import surrogates.forest.regressor as regressor
from surrogates import MondrianForestRegressor
from surrogates._core._tree_kernels import ROOT, box_floor_bits

INACTIVE = -0.5


def conditional_rows(rng, n, branches=4, per_branch=5, shared=2):
    """Rows of a conditional space's encoding: ``shared`` columns always active, then one
    block of ``per_branch`` columns per branch, active only in its own branch (else
    ``INACTIVE``, the smallest value)."""
    X = rng.random((n, shared + branches * per_branch))
    b = rng.integers(0, branches, n)
    for c in range(branches):
        X[b != c, shared + c * per_branch: shared + (c + 1) * per_branch] = INACTIVE
    return X


def both_ways(forest, Q, monkeypatch):
    """``(summing over the off-floor dimensions, summing every dimension)``: the predicted
    means and standard deviations."""
    monkeypatch.setattr(regressor, "FLOOR_SHARE", 0.0)
    sparse = forest.predict(Q, return_std=True)
    monkeypatch.setattr(regressor, "FLOOR_SHARE", 2.0)
    dense = forest.predict(Q, return_std=True)
    return sparse, dense


def assert_same(a, b):
    for u, v in zip(a, b):
        assert np.array_equal(u, v)


@pytest.mark.parametrize("posterior", ["empirical", "bp"])
@pytest.mark.parametrize("n_query", [5, 300, 2500])  # serial, mid-sized, thread pool
def test_the_same_predictions_as_summing_every_dimension(posterior, n_query, monkeypatch):
    rng = np.random.default_rng(3)
    X = conditional_rows(rng, 200)
    forest = MondrianForestRegressor(n_estimators=6, posterior=posterior, random_state=0)
    forest.fit(X, np.sin(X.sum(axis=1)))
    Q = conditional_rows(rng, n_query)
    Q[:3] = rng.uniform(-2.0, 2.0, (3, X.shape[1]))  # off the data's box, below the floor too
    sparse, dense = both_ways(forest, Q, monkeypatch)
    assert_same(sparse, dense)
    assert np.all(np.isfinite(sparse[1]))


def test_online_updates_refresh_the_node_bits(monkeypatch):
    """The node bits are kept while the trees are unchanged: an update must not leave stale
    ones (the new points widen boxes and add nodes)."""
    rng = np.random.default_rng(4)
    X = conditional_rows(rng, 60)
    forest = MondrianForestRegressor(n_estimators=4, random_state=1).fit(X, X[:, 0])
    Q = conditional_rows(rng, 400)
    for _ in range(5):
        sparse, dense = both_ways(forest, Q, monkeypatch)
        assert_same(sparse, dense)
        s = forest._store
        kept = regressor._NODE_BITS[s][1]
        fresh = np.empty_like(kept)
        box_floor_bits(s.box, s.meta, s.box[0, s.meta[0, ROOT], 0].copy(), fresh)
        for t in range(s.n_trees):  # the bits used are those of today's trees
            assert np.array_equal(kept[t, :s.meta[t, 1]], fresh[t, :s.meta[t, 1]])
        monkeypatch.setattr(regressor, "FLOOR_SHARE", 0.0)
        forest.predict(Q)  # the bits of these trees are now cached
        new = conditional_rows(rng, 7)
        new[0, 2:] = rng.random(new.shape[1] - 2)  # every block active: boxes leave the floor
        forest.partial_fit(new, new[:, 1])
    # a refit makes a new tree store of the same size: its bits are not the old store's
    forest.fit(X[::-1].copy(), X[::-1, 1].copy())
    assert_same(*both_ways(forest, Q, monkeypatch))


def test_pickled_forest_predicts_the_same(monkeypatch):
    rng = np.random.default_rng(5)
    X = conditional_rows(rng, 80)
    forest = MondrianForestRegressor(n_estimators=3, random_state=2).fit(X, X[:, 3])
    Q = conditional_rows(rng, 300)
    state, attributes = pickle.dumps(forest), dict(forest.__dict__)
    sparse, _ = both_ways(forest, Q, monkeypatch)
    # predicting leaves the forest's attributes as they were; the cached bits are not pickled
    assert forest.__dict__ == attributes and pickle.dumps(forest) == state
    copy = pickle.loads(pickle.dumps(forest))
    assert_same(both_ways(copy, Q, monkeypatch)[0], sparse)


def test_node_bits_mark_the_dimensions_whose_box_leaves_the_floor_out():
    rng = np.random.default_rng(6)
    X = conditional_rows(rng, 50)
    forest = MondrianForestRegressor(n_estimators=2, random_state=0).fit(X, X[:, 0])
    s = forest._store
    floor = s.box[0, s.meta[0, ROOT], 0].copy()
    out = np.empty(s.inode.shape[:2], np.uint64)
    box_floor_bits(s.box, s.meta, floor, out)
    for t in range(s.n_trees):
        for j in range(s.meta[t, 1]):
            want = sum(1 << d for d in range(X.shape[1])
                       if not s.box[t, j, 0, d] <= floor[d] <= s.box[t, j, 1, d])
            assert int(out[t, j]) == want


def test_batches_off_the_floor_and_wide_inputs_sum_every_dimension():
    rng = np.random.default_rng(7)
    X = rng.random((40, 70))  # more dimensions than bits
    forest = MondrianForestRegressor(n_estimators=2, random_state=0).fit(X, X[:, 0])
    xbits, nbits = regressor.floor_bits(forest._store, rng.random((5, 70)))
    assert xbits.size == 0 and nbits.size == 0
    X = rng.random((40, 6))  # a flat space: queries are almost never on the floor
    forest = MondrianForestRegressor(n_estimators=2, random_state=0).fit(X, X[:, 0])
    xbits, _ = regressor.floor_bits(forest._store, rng.random((50, 6)))
    assert xbits.size == 0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 60), d=st.integers(1, 12),
       share=st.floats(0.0, 1.0), n_query=st.integers(1, 40))
def test_any_data_on_and_off_the_floor(seed, n, d, share, n_query):
    """Random data with a share of coordinates at each dimension's smallest value (and
    queries at, below, above and inside it): the same bits both ways."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    X[rng.random((n, d)) < share] = 0.0
    forest = MondrianForestRegressor(n_estimators=3, random_state=seed % 97).fit(
        X, rng.normal(size=n))
    Q = rng.choice([0.0, -0.25, 0.5, 1.5], size=(n_query, d))
    Q = np.where(rng.random((n_query, d)) < 0.3, X.min(axis=0), Q)  # on the floor
    old = regressor.FLOOR_SHARE
    try:
        regressor.FLOOR_SHARE = 0.0
        sparse = forest.predict(Q, return_std=True)
        regressor.FLOOR_SHARE = 2.0
        dense = forest.predict(Q, return_std=True)
    finally:
        regressor.FLOOR_SHARE = old
    assert_same(sparse, dense)
