"""Pickles of every public estimator as the flat 0.1 layout wrote them, with their predictions,
so that the restructured package is tested to load them."""
import pickle, sys, numpy as np
from surrogates import (MondrianForestRegressor, MondrianForestClassifier, MondrianKernel,
                        MondrianKernelRidge, MondrianGrid, LaplaceKernelRidge,
                        RandomFourierFeatures, RandomBinningFeatures)
out = sys.argv[1]
rng = np.random.default_rng(0)
X = rng.random((40, 3)); y = np.sin(3 * X[:, 0]) + X[:, 1]; Xq = rng.random((10, 3))
yc = (y > np.median(y)).astype(int)
models = {
    "regressor": MondrianForestRegressor(n_estimators=3, random_state=0).fit(X, y),
    "regressor_bp": MondrianForestRegressor(n_estimators=3, posterior="bp", random_state=0).fit(X, y),
    "classifier": MondrianForestClassifier(n_estimators=3, random_state=0).fit(X, yc),
    "kernel": MondrianKernel(n_trees=3, lifetime=2.0, random_state=0).fit(X),
    "kernel_ridge": MondrianKernelRidge(n_trees=3, lifetime=2.0, random_state=0).fit(X, y),
    "grid": MondrianGrid(n_grids=2, lifetimes=2.0, random_state=0).fit(X, y),
    "laplace": LaplaceKernelRidge(lifetime=2.0).fit(X, y),
    "fourier": RandomFourierFeatures(n_components=20, random_state=0).fit(X),
    "binning": RandomBinningFeatures(n_grids=5, lifetime=2.0, random_state=0).fit(X),
}
expected = {}
for name, m in models.items():
    if hasattr(m, "predict_proba"):
        expected[name] = m.predict_proba(Xq)
    elif hasattr(m, "predict"):
        expected[name] = np.asarray(m.predict(Xq))
    else:
        t = m.transform(Xq)
        expected[name] = t.toarray() if hasattr(t, "toarray") else np.asarray(t)
    with open(f"{out}/{name}.pkl", "wb") as fh:
        pickle.dump(m, fh, protocol=4)
np.savez(f"{out}/expected.npz", Xq=Xq, **expected)
