"""MondrianForestClassifier: HNSP/IKN predictive, online updates, limits, bad input."""

import pickle

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_digits, load_iris

from surrogates import MondrianForestClassifier
from surrogates.forest._classification_kernels import expected_discount
from surrogates._core.tree import check_invariants


def _blobs(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0.6).astype(int) + (X[:, 1] > 0.8)
    return X, y


@pytest.mark.parametrize("eta,gamma,delta", [(1.0, 20.0, np.inf), (3.0, 20.0, 0.2),
                                             (0.2, 5.0, 1.5)])
def test_expected_discount_vs_monte_carlo(eta, gamma, delta):
    rng = np.random.default_rng(0)
    e = rng.exponential(1 / eta, 3_000_000)
    e = e[e < delta]
    vals = np.exp(-gamma * e)
    assert abs(expected_discount(eta, gamma, delta) - vals.mean()) < 5 * vals.std() / np.sqrt(len(vals))


def test_probabilities_sum_to_one_and_far_points_get_the_uniform():
    X, y = _blobs()
    for variant in ("ikn", "ref"):
        m = MondrianForestClassifier(n_estimators=20, branch_counts=variant, random_state=0).fit(X, y)
        P = m.predict_proba(np.r_[X, X + 0.05, [[1e7, -1e7]]])
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
        assert np.all(P >= 0)
        if variant == "ikn":  # the reference variant keeps j's counts: no uniform limit
            np.testing.assert_allclose(P[-1], 1 / 3, atol=1e-6)


def test_pure_leaf_box_gives_one_hot_with_infinite_lifetime():
    """The leaf discount is 0 under lifetime=inf; a floor or a finite lifetime smooths."""
    X = np.array([[0.0, 0.0], [0.1, 0.1], [0.05, 0.02], [1.0, 1.0], [0.9, 0.95]])
    y = np.array([0, 0, 0, 1, 1])
    q = X[:1]  # a training point lies inside every box on its path: no branch-off
    m = MondrianForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    np.testing.assert_array_equal(m.predict_proba(q), [[1.0, 0.0]])
    floored = MondrianForestClassifier(n_estimators=10, proba_floor=0.01, random_state=0).fit(X, y)
    np.testing.assert_allclose(floored.predict_proba(q), [[0.995, 0.005]])
    finite = MondrianForestClassifier(n_estimators=10, lifetime=2.0, random_state=0).fit(X, y)
    assert 0 < finite.predict_proba(q)[0, 1] < 0.5


def test_invariants_after_every_online_update_with_label_dependent_pausing():
    X, y = _blobs(80, seed=1)
    m = MondrianForestClassifier(n_estimators=5, random_state=0)
    m.partial_fit(X[:1], y[:1], classes=[0, 1, 2])
    for i in range(1, 80):
        m.partial_fit(X[i:i + 1], y[i:i + 1])
        check_invariants(m._store)
    m.partial_fit(X[:30], y[:30])  # a mini-batch
    check_invariants(m._store)


def test_online_equals_batch_in_distribution():
    X, y = _blobs(40, seed=2)
    bounds = [(0, 1), (0, 1)]
    batch = MondrianForestClassifier(n_estimators=400, feature_bounds=bounds, random_state=1).fit(X, y)
    online = MondrianForestClassifier(n_estimators=400, feature_bounds=bounds, random_state=2)
    order = np.random.default_rng(3).permutation(40)
    online.partial_fit(X[order[:1]], y[order[:1]], classes=[0, 1, 2])
    for i in order[1:]:
        online.partial_fit(X[i:i + 1], y[i:i + 1])
    assert stats.ks_2samp(batch.get_weighted_depth(), online.get_weighted_depth()).pvalue > 1e-3
    assert stats.ks_2samp(batch.get_root_split_times(), online.get_root_split_times()).pvalue > 1e-3
    assert stats.ks_2samp(batch.get_n_leaves(), online.get_n_leaves()).pvalue > 1e-3


def test_accuracy_on_bundled_data():
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(X))
    m = MondrianForestClassifier(random_state=0).fit(X[order[:100]], y[order[:100]])
    assert m.score(X[order[100:]], y[order[100:]]) > 0.9
    X, y = load_digits(return_X_y=True)
    m = MondrianForestClassifier(n_estimators=50, random_state=0).fit(X[:1300], y[:1300])
    assert m.score(X[1300:], y[1300:]) > 0.85


def test_string_labels_classes_and_unseen_labels():
    X, y = _blobs(60)
    labels = np.array(["low", "mid", "high"])[y]
    m = MondrianForestClassifier(n_estimators=5, random_state=0)
    m.partial_fit(X[:5], labels[:5], classes=["high", "low", "mid"])
    m.partial_fit(X[5:], labels[5:])
    assert set(m.predict(X)) <= {"low", "mid", "high"}
    before = m.predict_proba(X)
    n = m.n_samples_seen_
    with pytest.raises(ValueError, match="y contains labels"):
        m.partial_fit(X[:2], np.array(["low", "other"]))
    with pytest.raises(ValueError, match="classes"):
        m.partial_fit(X[:2], labels[:2], classes=["a", "b"])
    assert m.n_samples_seen_ == n
    np.testing.assert_array_equal(before, m.predict_proba(X))
    fresh = MondrianForestClassifier(n_estimators=5, random_state=0)
    low = labels == "low"
    fresh.partial_fit(X[low][:5], labels[low][:5])  # classes learned from this batch only
    with pytest.raises(ValueError, match="classes="):
        fresh.partial_fit(X[:60], labels[:60])


@pytest.mark.parametrize("params,match", [({"discount_factor": 0}, "discount_factor"),
                                          ({"branch_counts": "x"}, "branch_counts"),
                                          ({"proba_floor": 1.0}, "proba_floor"),
                                          ({"n_estimators": 0}, "n_estimators")])
def test_invalid_parameters(params, match):
    X, y = _blobs(30)
    with pytest.raises((ValueError, TypeError), match=match):
        MondrianForestClassifier(**params).fit(X, y)


def test_bad_input_is_rejected_and_changes_nothing():
    X, y = _blobs(50)
    m = MondrianForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    before = m.predict_proba(X)
    for Xb in (np.array([[np.nan, 0.2]]), np.array([[0.1, 0.2, 0.3]])):
        with pytest.raises(ValueError):
            m.partial_fit(Xb, y[:1])
    np.testing.assert_array_equal(before, m.predict_proba(X))
    assert m.n_samples_seen_ == 50


def test_pickle_round_trip():
    X, y = _blobs(80)
    m = MondrianForestClassifier(n_estimators=10, random_state=0).fit(X[:60], y[:60])
    clone = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m.predict_proba(X), clone.predict_proba(X))
    m.partial_fit(X[60:], y[60:])
    clone.partial_fit(X[60:], y[60:])
    np.testing.assert_array_equal(m.predict_proba(X), clone.predict_proba(X))


def _reference_proba(m, X):
    """Spec A5-A7 in plain Python straight from the store: node means derived along each
    query's path, the branch-off terms with the closed-form expected discount."""
    from surrogates._core._tree_kernels import FEAT, LEFT, RIGHT, ROOT, TAU, THRESH

    s = m._store
    K = len(m.classes_)
    gamma = m.discount_factor * m.n_features_in_
    Xs = m._scale(np.asarray(X, dtype=float))
    out = np.zeros((len(Xs), K))
    for i, x in enumerate(Xs):
        for t in range(s.n_trees):
            j, tp, p_ns, gpar = s.meta[t, ROOT], 0.0, 1.0, np.full(K, 1.0 / K)
            while True:
                n = s.stats[t, j, 1:]
                tab = (n > 0).astype(float)
                delta = s.fnode[t, j, TAU] - tp
                eta = (np.maximum(s.box[t, j, 0] - x, 0) + np.maximum(x - s.box[t, j, 1], 0)).sum()
                p = -np.expm1(-delta * eta) if eta > 0 else 0.0
                if p > 0:
                    dbar = expected_discount(eta, gamma, delta)
                    if m.branch_counts == "ref":
                        g = (n - dbar * tab + dbar * tab.sum() * gpar) / n.sum()
                    else:
                        g = ((1 - dbar) * tab + dbar * tab.sum() * gpar) / tab.sum()
                    out[i] += p_ns * p * g
                leaf = s.inode[t, j, LEFT] < 0
                if leaf:
                    c = n
                else:
                    c = ((s.stats[t, s.inode[t, j, LEFT], 1:] > 0).astype(float)
                         + (s.stats[t, s.inode[t, j, RIGHT], 1:] > 0))
                d = np.exp(-gamma * delta) if np.isfinite(delta) else 0.0
                gj = (c - d * tab + d * tab.sum() * gpar) / c.sum()
                if leaf:
                    out[i] += p_ns * (1 - p) * gj
                    break
                p_ns *= 1 - p
                if p_ns <= 0:
                    break
                gpar = gj
                j = s.inode[t, j, LEFT] if x[s.inode[t, j, FEAT]] <= s.fnode[t, j, THRESH] \
                    else s.inode[t, j, RIGHT]
                tp = s.fnode[t, s.inode[t, j, 2], TAU]
    return out / s.n_trees


def _both_paths(m, X):
    """predict_proba through the per-query path walk and through the node-mean cache."""
    from surrogates.forest.classifier import _ProbaCache

    m._proba_cache = _ProbaCache()
    m._proba_cache.QUERY_COST = 0  # never build: path walk
    walk = m.predict_proba(X)
    m._proba_cache = _ProbaCache()
    m._proba_cache.QUERY_COST = 10**9  # always build: cache
    cached = m.predict_proba(X)
    assert m._proba_cache.key is not None
    return walk, cached


@pytest.mark.parametrize("variant", ["ikn", "ref"])
@pytest.mark.parametrize("lifetime", [np.inf, 3.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_cached_prediction_equals_the_reference(variant, lifetime, seed):
    rng = np.random.default_rng(seed)
    n, D, K = 60, 3, 4
    X = rng.random((n, D))
    y = rng.integers(0, K, n)
    X[:20, 0] = np.round(X[:20, 0], 1)  # ties: zero-width sides and repeated values
    m = MondrianForestClassifier(n_estimators=7, lifetime=lifetime, branch_counts=variant,
                                 min_samples_split=1 + seed, random_state=seed)
    m.partial_fit(X[:30], y[:30], classes=np.arange(K))
    for i in range(30, n):  # online trees: node ids are not in pre-order
        m.partial_fit(X[i:i + 1], y[i:i + 1])
    Q = np.r_[X, rng.random((40, D)), rng.random((10, D)) * 3 - 1, X[:5] + 1e-9, [[1e6, -1e6, 0]]]
    ref = _reference_proba(m, Q)
    walk, cached = _both_paths(m, Q)
    np.testing.assert_allclose(walk, ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cached, ref, rtol=0, atol=1e-12)
    # the cache is invalidated by an update, and rebuilt from the new trees
    m.partial_fit(rng.random((3, D)), [0, 1, 3])
    ref = _reference_proba(m, Q)
    np.testing.assert_allclose(m.predict_proba(Q), ref, rtol=0, atol=1e-12)
    m.set_params(discount_factor=2.0)  # gamma is part of the cache key
    ref = _reference_proba(m, Q)
    np.testing.assert_allclose(m.predict_proba(Q), ref, rtol=0, atol=1e-12)
    m.fit(X[:25], y[:25])
    walk, cached = _both_paths(m, Q)
    np.testing.assert_allclose(cached, _reference_proba(m, Q), rtol=0, atol=1e-12)
    np.testing.assert_allclose(walk, cached, rtol=0, atol=1e-12)


def test_cache_is_built_after_enough_queries_and_survives_pickling():
    X, y = _blobs(200)
    m = MondrianForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    cache = m._proba_cache
    cache.QUERY_COST = m._store.meta[:, 1].max() / 2  # build from the second query on
    before = m.__dict__.copy()
    p1 = m.predict_proba(X[:1])  # one query: the path walk, no build
    assert cache.key is None and m.__dict__ == before
    P = m.predict_proba(X)  # many queries: the cache is built, the estimator's dict unchanged
    assert cache.key is not None and m.__dict__ == before
    np.testing.assert_array_equal(p1, P[:1])
    clone = pickle.loads(pickle.dumps(m))
    assert clone._proba_cache.key is None and clone._proba_cache.arrays is None
    np.testing.assert_array_equal(clone.predict_proba(X), P)
    m.partial_fit(X[:5], y[:5])
    assert cache.key is None
    clone.partial_fit(X[:5], y[:5])
    np.testing.assert_array_equal(m.predict_proba(X), clone.predict_proba(X))


@pytest.mark.parametrize("lifetime", [np.inf, 2.0])
def test_serial_and_threaded_small_batch_kernels_grow_identical_trees(lifetime, monkeypatch):
    """One-point updates go to whichever extend kernel is timed faster: both must agree."""
    import surrogates._core.tree as tree
    from surrogates._core._tree_kernels import NNODES
    from surrogates._core.tree import _SmallBatchKernel

    monkeypatch.setattr(tree, "THREADS_FROM", 0)  # a forest this small would use one thread

    X, y = _blobs(90, seed=4)
    models = []
    for k in (0, 1):
        m = MondrianForestClassifier(n_estimators=6, lifetime=lifetime, random_state=3)
        m.partial_fit(X[:3], y[:3], classes=[0, 1, 2])
        chooser = m._store._small_batches = _SmallBatchKernel()
        chooser.pick = lambda k=k: k
        for i in range(3, 90):
            m.partial_fit(X[i:i + 1], y[i:i + 1])
        check_invariants(m._store)
        models.append(m)
    a, b = models[0]._store, models[1]._store
    np.testing.assert_array_equal(a.meta, b.meta)
    np.testing.assert_array_equal(a.rng, b.rng)
    for t in range(a.n_trees):
        nn = a.meta[t, NNODES]
        for f in ("inode", "fnode", "box", "stats"):
            np.testing.assert_array_equal(getattr(a, f)[t, :nn], getattr(b, f)[t, :nn])
    np.testing.assert_array_equal(models[0].predict_proba(X), models[1].predict_proba(X))


def test_fresh_array_large_is_a_plain_writable_array():
    from surrogates._core.tree import fresh_array
    from surrogates.forest._classification_kernels import WALK_DTYPE

    for shape, dtype in [((600, 1000), np.float64), ((3, 200000), WALK_DTYPE), (10, np.int64)]:
        a = fresh_array(shape, dtype)
        assert a.shape == (shape if isinstance(shape, tuple) else (shape,)) and a.dtype == dtype
        assert a.flags.c_contiguous and a.flags.writeable
        a[...] = np.zeros((), dtype)
        b = pickle.loads(pickle.dumps(a))
        np.testing.assert_array_equal(a, b)


def test_structure_parameter_changed_after_fit_is_refused_by_partial_fit():
    X, y = _blobs(120)
    m = MondrianForestClassifier(n_estimators=5, random_state=0).fit(X[:100], y[:100])
    before = m.predict_proba(X)
    for params, match in [({"n_estimators": 20}, "n_estimators was changed"),
                          ({"min_samples_split": 0}, "min_samples_split must be >= 1"),
                          ({"lifetime": 2.0}, "lifetime was changed"),
                          ({"random_state": 1}, "random_state was changed")]:
        old = {k: m.get_params()[k] for k in params}
        m.set_params(**params)
        with pytest.raises(ValueError, match=match):
            m.partial_fit(X[100:], y[100:])
        assert m.n_samples_seen_ == 100
        np.testing.assert_array_equal(before, m.predict_proba(X))  # the fitted forest
        m.set_params(**old)
    m.set_params(discount_factor=3.0, branch_counts="ref", proba_floor=0.1)  # act at once
    m.partial_fit(X[100:], y[100:])
    assert m.n_samples_seen_ == 120
    for params, match in [({"discount_factor": -1.0}, "discount_factor"),
                          ({"branch_counts": "rf"}, "branch_counts"),
                          ({"proba_floor": 1.0}, "proba_floor")]:
        old = {k: m.get_params()[k] for k in params}
        m.set_params(**params)
        with pytest.raises(ValueError, match=match):
            m.predict_proba(X)
        m.set_params(**old)


def test_a_rejected_refit_leaves_the_fitted_classifier_as_it_was():
    X, y = _blobs(60)
    m = MondrianForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    before = m.predict_proba(X)
    classes = m.classes_.copy()
    m.set_params(feature_weights=[1.0, 2.0, 3.0])  # wrong length: found after the labels
    with pytest.raises(ValueError, match="feature_weights"):
        m.fit(X, np.array(["a", "b", "c", "d"] * 15))
    np.testing.assert_array_equal(m.classes_, classes)
    np.testing.assert_array_equal(before, m.predict_proba(X))


def test_queries_whose_scaled_distance_overflows_get_finite_probabilities():
    X, y = _blobs(60)
    m = MondrianForestClassifier(n_estimators=5, random_state=0).fit(X * 1e-200, y)
    p = m.predict_proba(np.array([[1e300, 0.0], [-1e308, 1e308], [0.5e-200, 0.5e-200]]))
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p[:2], 1.0 / len(m.classes_))  # far from all data: uniform
