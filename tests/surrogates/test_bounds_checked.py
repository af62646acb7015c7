"""The compiled kernels under numba's bounds checking.

The kernels index the tree store's arrays without checking (they rely on the store keeping
enough room), so a missing check shows up as silent memory corruption, or not at all.  Here
the store is exercised in a fresh process with ``NUMBA_BOUNDSCHECK=1``, where every
out-of-range index raises ``IndexError``, and with the numba cache of the session's
bounds-checked processes (the ``boundscheck_cache`` fixture), so that no machine code compiled
without the checks is reused.  Sizes are small: compiling the kernels with the checks is most
of the cost (about a minute).
"""

import os
import subprocess
import sys

#: every way the store is grown, copied and read: batch fit, online one point at a time and
#: in batches (including the one-tree serial kernel), a pickling round trip followed by more
#: online growth, the prediction kernels of every batch size and posterior, refit_targets,
#: and the classifier's path-walk and cached predictions
SCRIPT = r"""
import pickle

import numpy as np

from surrogates import MondrianForestClassifier, MondrianForestRegressor
from surrogates import regressor
from surrogates._core.tree import check_invariants

rng = np.random.default_rng(0)
X = rng.random((400, 3))
y = np.sin(5 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(400)
labels = rng.integers(0, 3, 400)


def grow(model, target, one_by_one_to=200):
    model.fit(X[:100], target[:100])
    model = pickle.loads(pickle.dumps(model))  # node arrays hold only what is in use
    for i in range(100, one_by_one_to):
        model.partial_fit(X[i:i + 1], target[i:i + 1])
    for i in range(one_by_one_to, 400, 37):
        model.partial_fit(X[i:i + 37], target[i:i + 37])
    check_invariants(model._store)
    return model


for mss, lifetime, T in [(2, np.inf, 4), (5, 2.0, 3), (2, np.inf, 1)]:
    f = grow(MondrianForestRegressor(n_estimators=T, min_samples_split=mss, lifetime=lifetime,
                                     random_state=0), y)
    f = pickle.loads(pickle.dumps(f))
    f.partial_fit(X[:20] + 0.5, y[:20])  # outside the first range
    for posterior in ("empirical", "bp"):
        f.set_params(posterior=posterior)
        for n in (5, 300, regressor.SERIAL_BELOW, 4 * regressor.NODE_BLOCK):
            mean, std = f.predict(rng.uniform(-0.5, 1.5, (n, 3)), return_std=True)
            assert np.isfinite(mean).all() and np.isfinite(std).all()
        f.predict_per_tree(X[:7])
        f.predictive_log_pdf(X[:7], y[:7])
    f.log_marginal_likelihood()
    f.refit_targets(np.cos(np.arange(f.n_samples_seen_)))
    check_invariants(f._store)
    f.predict(X)
    f.apply(X)

c = grow(MondrianForestClassifier(n_estimators=4, random_state=0), labels, one_by_one_to=150)
c = pickle.loads(pickle.dumps(c))
c.partial_fit(X[:30] + 0.5, labels[:30])
for n in (3, 400):  # a few queries walk the paths, many build the node cache first
    p = c.predict_proba(rng.uniform(-0.5, 1.5, (n, 3)))
    assert np.allclose(p.sum(axis=1), 1.0)
c.predict_proba(X[:5])
print("bounds-checked run completed")
"""


def test_store_kernels_stay_in_bounds_under_numba_boundscheck(boundscheck_cache):
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(boundscheck_cache))
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "bounds-checked run completed" in done.stdout
