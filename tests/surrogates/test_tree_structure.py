"""Structure of Mondrian trees: invariants after every update, online = batch in distribution,
closed forms of the process against their definitions."""

import numpy as np
import pytest
from scipy import stats

from surrogates import MondrianForestRegressor
from surrogates._core._tree_kernels import LEFT, NNODES, ROOT, TASK_REGRESSION, extend_trees
from surrogates._core.tree import TreeStore, check_invariants


def _data(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("mss", [1, 2, 5])
@pytest.mark.parametrize("lifetime", [np.inf, 3.0])
def test_invariants_after_every_online_update(mss, lifetime):
    X, y = _data(70, 3, seed=mss)
    m = MondrianForestRegressor(n_estimators=4, min_samples_split=mss, lifetime=lifetime,
                                feature_bounds=[(0, 1)] * 3, random_state=1)
    m.partial_fit(X[:1], y[:1])
    check_invariants(m._store)
    for i in range(1, 70):
        m.partial_fit(X[i:i + 1], y[i:i + 1])
        check_invariants(m._store)
    assert m.n_samples_seen_ == 70


@pytest.mark.parametrize("mss", [2, 4])
def test_invariants_batch_and_minibatches(mss):
    X, y = _data(300, 4, seed=3)
    m = MondrianForestRegressor(n_estimators=5, min_samples_split=mss, random_state=2)
    m.fit(X[:100], y[:100])
    check_invariants(m._store)
    for a, b in [(100, 101), (101, 150), (150, 151), (151, 300)]:  # small, large (parallel) batches
        m.partial_fit(X[a:b], y[a:b])
        check_invariants(m._store)


def test_invariants_with_duplicates_and_points_outside_the_first_range():
    rng = np.random.default_rng(5)
    base = rng.random((10, 2))
    X = np.concatenate([base, base, base[:3], rng.random((20, 2)) * 4 - 2])  # duplicates, outliers
    y = rng.standard_normal(len(X))
    m = MondrianForestRegressor(n_estimators=3, min_samples_split=2, random_state=0)
    m.fit(X[:10], y[:10])
    for i in range(10, len(X)):
        m.partial_fit(X[i:i + 1], y[i:i + 1])
        check_invariants(m._store)
    # identical inputs can never be separated: those blocks stay paused leaves
    same = MondrianForestRegressor(n_estimators=2, min_samples_split=2, random_state=0)
    same.fit(np.ones((5, 2)), np.arange(5.0))
    assert list(same.get_n_leaves()) == [1, 1]
    check_invariants(same._store)


def test_every_leaf_paused_with_infinite_lifetime_and_not_with_a_short_one():
    X, y = _data(200, 2)
    short = MondrianForestRegressor(n_estimators=3, min_samples_split=2, lifetime=0.5,
                                    random_state=0).fit(X, y)
    s = short._store
    unpaused = sum(int(np.sum(s.inode[t, :s.meta[t, NNODES], 5][s.is_leaf(t)] == 0))
                   for t in range(3))
    assert unpaused > 0  # the lifetime ran out before the blocks became small
    check_invariants(s)


def _forest_stats(model):
    return model.get_root_split_times(), model.get_n_leaves(), model.get_weighted_depth()


def test_online_equals_batch_in_distribution():
    """Root split time, number of leaves and depth: batch trees on all data vs trees grown one
    point at a time in a random order (same data), over 400 independent trees each."""
    X, y = _data(40, 2, seed=11)
    bounds = [(0, 1), (0, 1)]
    batch = MondrianForestRegressor(n_estimators=400, min_samples_split=3, feature_bounds=bounds,
                                    random_state=1).fit(X, y)
    order = np.random.default_rng(2).permutation(len(X))
    online = MondrianForestRegressor(n_estimators=400, min_samples_split=3, feature_bounds=bounds,
                                     random_state=3)
    online.partial_fit(X[order[:1]], y[order[:1]])
    for i in order[1:]:
        online.partial_fit(X[i:i + 1], y[i:i + 1])
    mini = MondrianForestRegressor(n_estimators=400, min_samples_split=3, feature_bounds=bounds,
                                   random_state=4)
    for chunk in np.array_split(order[::-1], 5):
        mini.partial_fit(X[chunk], y[chunk])
    tb, lb, db = _forest_stats(batch)
    for other in (online, mini):
        to, lo, do = _forest_stats(other)
        assert stats.ks_2samp(tb, to).pvalue > 1e-3
        assert stats.ks_2samp(db, do).pvalue > 1e-3
        # number of leaves: chi-square on the pooled histogram
        values = np.union1d(lb, lo)
        table = np.array([[np.sum(lb == v) for v in values], [np.sum(lo == v) for v in values]])
        keep = table.sum(axis=0) >= 10
        table = np.column_stack([table[:, keep], table[:, ~keep].sum(axis=1)])
        table = table[:, table.sum(axis=0) > 0]
        assert stats.chi2_contingency(table).pvalue > 1e-3
    # and the closed form: tau_root ~ Exp(linear dimension of the data's box)
    rate = np.sum(X.max(axis=0) - X.min(axis=0))
    assert stats.kstest(tb, "expon", args=(0, 1 / rate)).pvalue > 1e-3
    assert stats.kstest(online.get_root_split_times(), "expon", args=(0, 1 / rate)).pvalue > 1e-3


def test_online_is_not_equal_to_batch_when_broken():
    """The distribution test above has power: trees that ignore pausing look different."""
    X, y = _data(40, 2, seed=11)
    a = MondrianForestRegressor(n_estimators=400, min_samples_split=3, random_state=1).fit(X, y)
    b = MondrianForestRegressor(n_estimators=400, min_samples_split=8, random_state=1).fit(X, y)
    assert stats.ks_2samp(a.get_weighted_depth(), b.get_weighted_depth()).pvalue < 1e-6


def test_split_dimension_proportional_to_side_length():
    rng = np.random.default_rng(0)
    X = rng.random((30, 2)) * np.array([3.0, 1.0])
    m = MondrianForestRegressor(n_estimators=2000, min_samples_split=2,
                                feature_bounds=[(0, 1), (0, 1)], random_state=0).fit(X, np.zeros(30))
    s = m._store
    dims = s.inode[np.arange(2000), s.meta[:, ROOT], 3]
    side = X.max(axis=0) - X.min(axis=0)
    expected = side / side.sum() * 2000
    assert stats.chisquare(np.bincount(dims, minlength=2), expected).pvalue > 1e-3


def test_store_grows_and_reproducible_streams():
    X, y = _data(500, 2)
    s1 = TreeStore(3, 2, 3, np.inf, 2, TASK_REGRESSION, np.random.SeedSequence(7), capacity=4)
    s2 = TreeStore(3, 2, 3, np.inf, 2, TASK_REGRESSION, np.random.SeedSequence(7), capacity=4)
    s1.fit(X[:1], y[:1])
    s2.fit(X[:1], y[:1])
    for i in range(1, 500, 7):
        s1.extend(X[i:i + 7], y[i:i + 7], np.zeros(2), np.ones(2))
        s2.extend(X[i:i + 7], y[i:i + 7], np.zeros(2), np.ones(2))
    check_invariants(s1)
    for a in ("inode", "fnode", "box", "stats", "meta", "rng"):
        u, v = getattr(s1, a), getattr(s2, a)
        nn = s1.meta[:, NNODES].max()
        np.testing.assert_array_equal(u[:, :nn] if u.ndim > 2 else u, v[:, :nn] if v.ndim > 2 else v)
    assert s1.inode.shape[1] >= 2 * 500


def test_extend_kernel_is_serial_and_parallel_consistent():
    """The parallel and serial kernels are one implementation: same seeds, same trees."""
    from surrogates._core._tree_kernels import extend_trees_parallel
    X, y = _data(200, 3)
    stores = []
    for kernel in (extend_trees, extend_trees_parallel):
        s = TreeStore(4, 3, 3, np.inf, 2, TASK_REGRESSION, np.random.SeedSequence(3), capacity=256)
        s.fit(X[:50], y[:50])
        s.X[50:200] = X[50:200]
        s.y[50:200] = y[50:200]
        s.n_points = 200
        kernel(50, 200, *s._args())
        stores.append(s)
    nn = stores[0].meta[:, NNODES].max()
    np.testing.assert_array_equal(stores[0].meta, stores[1].meta)
    np.testing.assert_array_equal(stores[0].fnode[:, :nn], stores[1].fnode[:, :nn])
    check_invariants(stores[0])
    assert np.all(stores[0].inode[:, stores[0].meta[0, ROOT], LEFT] >= 0)


def _two_stores(n_trees=6, n=300, seed=5):
    """Two equal stores of ``n_trees`` regression trees fitted on the same ``n`` points."""
    X, y = _data(n, 3, seed)
    stores = [TreeStore(n_trees, 3, 3, np.inf, 2, TASK_REGRESSION, np.random.SeedSequence(seed))
              for _ in range(2)]
    return X, y, stores


def test_fit_and_restat_kernels_are_serial_and_threaded_consistent():
    """Small forests grow and re-count their trees on one thread, large ones on the thread pool:
    the two kernels of each pair give the same trees and statistics, bit for bit."""
    from surrogates._core._tree_kernels import (fit_trees, fit_trees_serial, restat_regression,
                                                restat_regression_serial)

    X, y, stores = _two_stores()
    for s, fit, restat in zip(stores, (fit_trees_serial, fit_trees),
                              (restat_regression_serial, restat_regression)):
        s.reserve(X.shape[0])
        s.X[:300] = X
        s.y[:300] = y
        s.n_points = 300
        fit(300, *s._args())
        s.y[:300] = -2.0 * y + 1.0
        restat(s.y, s.inode, s.pnext, s.stats, s.meta)
    a, b = stores
    check_invariants(a)
    nn = a.meta[:, NNODES].max()
    np.testing.assert_array_equal(a.meta, b.meta)
    np.testing.assert_array_equal(a.rng, b.rng)
    for f in ("inode", "fnode", "box", "stats"):
        np.testing.assert_array_equal(getattr(a, f)[:, :nn], getattr(b, f)[:, :nn])


def test_small_forests_run_the_tree_kernels_on_one_thread(monkeypatch):
    """Below THREADS_FROM points times trees the store calls only the serial kernels (on a
    fresh install the threaded ones are then never compiled for a small forest); from it on,
    the threaded ones."""
    import surrogates._core.tree as tree

    called = []
    for name in ("fit_trees", "fit_trees_serial", "extend_trees", "extend_trees_parallel",
                 "restat_regression", "restat_regression_serial"):
        kernel = getattr(tree, name)
        monkeypatch.setattr(tree, name, lambda *a, k=kernel, n=name: (called.append(n), k(*a)))
    X, y = _data(120, 3)
    small, large = (TreeStore(t, 3, 3, np.inf, 2, TASK_REGRESSION, np.random.SeedSequence(0))
                    for t in (4, 10))
    for s in (small, large):
        s.fit(X[:100], y[:100])
        s.extend(X[100:101], y[100:101], np.zeros(3), np.ones(3))
        s.extend(X[101:120], y[101:120], np.zeros(3), np.ones(3))
        s.set_targets(y[:120])
    assert not small.use_threads() and large.use_threads()
    assert called[:4] == ["fit_trees_serial", "extend_trees", "extend_trees",
                          "restat_regression_serial"]
    assert called[4] == "fit_trees" and called[6:] == ["extend_trees_parallel",
                                                       "restat_regression"]


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(X=arrays(np.float64, st.tuples(st.integers(2, 25), st.integers(1, 3)),
                elements=st.sampled_from([0.0, 0.25, 0.5, 1.0, -3.0, 7.5, 1e-9])),
       mss=st.integers(1, 4), split=st.integers(1, 24), seed=st.integers(0, 2**32 - 1))
def test_invariants_hold_for_arbitrary_small_data(X, mss, split, seed):
    """Ties, duplicates, constant features, points far outside the first batch's range."""
    y = np.arange(len(X), dtype=float)
    split = min(split, len(X) - 1)
    m = MondrianForestRegressor(n_estimators=3, min_samples_split=mss, random_state=seed)
    m.fit(X[:split], y[:split])
    for i in range(split, len(X)):
        m.partial_fit(X[i:i + 1], y[i:i + 1])
    check_invariants(m._store)
    mean, std = m.predict(X, return_std=True)
    assert np.all(np.isfinite(mean)) and np.all(std >= 0)


# --------------------------------------------------------------------------------------------
# node capacity of a store that was pickled (unpickled stores hold exactly the nodes in use)
# --------------------------------------------------------------------------------------------

def _unpickled_forest(kind):
    """A forest fitted on 100 points and pickled, the shape that used to run out of nodes:
    its node arrays come back holding exactly the nodes in use, fewer than twice the points."""
    import pickle

    from surrogates import MondrianForestClassifier

    if kind == "classifier":
        # noisy labels: blocks seldom become pure (and paused), so the trees have about as
        # many nodes as a regression tree
        rng = np.random.default_rng(1)
        X, y = rng.random((400, 3)), rng.integers(0, 2, 400)
        model = MondrianForestClassifier(n_estimators=10, min_samples_split=2, random_state=0)
    else:
        X, y = _data(400, 3, seed=8)
        model = MondrianForestRegressor(min_samples_split=2, random_state=0)
    model.fit(X[:100], y[:100])
    return model, pickle.dumps(model), X, y


#: run after unpickling, here and in a fresh process: one point at a time up to 400 points,
#: the nodes in use never exceeding the node arrays
_GROW_ONE_BY_ONE = """
for i in range(100, 400):
    model.partial_fit(X[i:i + 1], y[i:i + 1])
    store = model._store
    assert store.meta[:, 1].max() <= store.inode.shape[1], (
        f"point {i + 1}: {store.meta[:, 1].max()} nodes for a capacity of "
        f"{store.inode.shape[1]}")
assert model.n_samples_seen_ == 400
check_invariants(model._store)
"""


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_unpickled_forest_grows_one_point_at_a_time_within_its_node_arrays(kind):
    import pickle

    model, blob, X, y = _unpickled_forest(kind)
    model = pickle.loads(blob)
    exec(_GROW_ONE_BY_ONE, {"model": model, "X": X, "y": y, "check_invariants": check_invariants})


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_forest_unpickled_in_a_fresh_process_grows_within_its_node_arrays(tmp_path, kind):
    import subprocess
    import sys
    import textwrap

    _, blob, X, y = _unpickled_forest(kind)
    (tmp_path / "model.pkl").write_bytes(blob)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    code = textwrap.dedent(f"""
        import pickle
        import numpy as np
        from surrogates._core.tree import check_invariants
        model = pickle.loads(open(r"{tmp_path / 'model.pkl'}", "rb").read())
        X = np.load(r"{tmp_path / 'X.npy'}")
        y = np.load(r"{tmp_path / 'y.npy'}")
    """) + _GROW_ONE_BY_ONE
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
