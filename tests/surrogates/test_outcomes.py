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
