"""The Mondrian library: forests, kernel features, grids and baselines.

Depends on numpy, scipy, numba and scikit-learn's estimator API only; knows nothing of
Bayesian optimization.  Names are imported on first use (``import surrogates`` stays cheap
for Bayesian optimization, which needs only the regression forests).
"""

import importlib

_WHERE = {
    "MondrianForestRegressor": "regressor",
    "MondrianForestClassifier": "classifier",
    "SMACRandomForestRegressor": "smac_forest",
    "MondrianGrid": "grid",
    # Mondrian kernel and its baselines
    **{name: "kernel" for name in ("MondrianKernel", "MondrianKernelRidge", "LifetimePath",
                                   "lifetime_path", "forest_lifetime_path", "relative_error",
                                   "rmse", "lifetime_from_lengthscale")},
    **{name: "baselines" for name in ("LaplaceKernelRidge", "RandomFourierFeatures",
                                      "RandomBinningFeatures", "laplace_kernel",
                                      "select_width")},
}

__all__ = list(_WHERE)
__version__ = "0.1.0"


def __getattr__(name):
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
