"""SharedPartitions: forests that share their partitions, predicted together, give each
forest's own predictions bit for bit."""

import copy

import numpy as np
import pytest

from surrogates import MondrianForestRegressor
from surrogates.forest.outcomes import SharedPartitions, share_partitions


def _forests(n=300, d=3, seed=0, k=4, **params):
    """``k`` forests from one seed on the same inputs, fed online, with different targets
    (of very different scales: the last beyond the forests' target rescaling)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    scales = [1.0, 1e-3, 50.0, 1e130][:k]
    base = MondrianForestRegressor(n_estimators=5, min_samples_split=2, K_cap=500,
                                   feature_bounds=[[0.0, 1.0]] * d,
                                   random_state=np.random.SeedSequence(seed), **params)
    forests = []
    for i, s in enumerate(scales):
        y = s * np.sin(X @ rng.normal(size=d) + i)
        f = copy.deepcopy(base)
        f.fit(X[:n // 2], y[:n // 2])
        for a in range(n // 2, n, 7):
            f.partial_fit(X[a:a + 7], y[a:a + 7])
        forests.append(f)
    return forests


@pytest.mark.parametrize("posterior, branch_off", [("empirical", None), ("bp", "E"),
                                                   ("bp", "R"), ("bp", "F"), ("mixed", None)])
@pytest.mark.parametrize("n", [1, 40, 700, 2500])  # serial, chosen, threaded batches
def test_every_forest_is_predicted_as_on_its_own(posterior, branch_off, n):
    forests = _forests()
    for i, f in enumerate(forests):
        if posterior == "mixed":
            f.set_params(posterior="bp" if i % 2 else "empirical")
        else:
            f.set_params(posterior=posterior, branch_off=branch_off)
    assert share_partitions(forests)
    shared = SharedPartitions(forests)
    Q = np.random.default_rng(1).random((n, 3)) * 1.4 - 0.2  # inside and outside the data
    means, stds = shared.predict(Q)
    both = shared.predict_all(Q)
    tree_means, tree_vars = shared.predict_per_tree(Q)
    for j, f in enumerate(forests):
        m, s = f.predict(Q, return_std=True)
        tm, tv = f.predict_per_tree(Q)
        for got, want in [(means[j], m), (stds[j], s), (both[0][j], m), (both[1][j], s),
                          (both[2][j], tm), (both[3][j], tv), (tree_means[j], tm),
                          (tree_vars[j], tv)]:
            assert got.shape == want.shape
            np.testing.assert_array_equal(got, want)


def test_forests_of_other_seeds_or_inputs_do_not_share():
    a, b = _forests(k=2)
    assert share_partitions([a, b]) and share_partitions([a])
    other = _forests(seed=1, k=1)[0]
    assert not share_partitions([a, other])
    more = copy.deepcopy(b)
    more.partial_fit(np.full((1, 3), 0.5), [0.0])
    assert not share_partitions([a, more])
    assert not share_partitions([a, MondrianForestRegressor()])  # not fitted
    assert not share_partitions([])
    with pytest.raises(ValueError, match="same partitions"):
        SharedPartitions([a, other])


def test_partitions_are_compared_in_the_nodes_used_by_value():
    from surrogates._core._tree_kernels import NNODES

    a, b = _forests(k=2)
    s = b._store
    nodes = s.meta[:, NNODES]
    # a node slot no tree uses may differ; a used node's box, split or child may not
    s.box[0, nodes[0]:] = 123.0
    assert share_partitions([a, b])
    # equal values in other bits (a zero's sign) are equal: the value comparison decides
    old = s.box[0, 0, 0, 0]
    a._store.box[0, 0, 0, 0], s.box[0, 0, 0, 0] = 0.0, -0.0
    assert share_partitions([a, b])
    a._store.box[0, 0, 0, 0] = s.box[0, 0, 0, 0] = old
    for attr, index in [("box", (1, nodes[1] - 1, 0, 0)), ("fnode", (0, 0, 0)),
                        ("inode", (2, 0, 0))]:
        arr = getattr(s, attr)
        old = arr[index]
        arr[index] = old + 1
        assert not share_partitions([a, b])
        arr[index] = old
        assert share_partitions([a, b])


def test_mid_sized_batches_serial_or_threaded_give_the_same_numbers():
    forests = _forests(k=3)
    shared = SharedPartitions(forests)
    Q = np.random.default_rng(2).random((900, 3))
    first = shared.predict_all(Q)
    for _ in range(6):  # the chooser tries both kernels, then keeps the faster
        again = shared.predict_all(Q)
        for got, want in zip(again, first):
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
