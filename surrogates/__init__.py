"""The Mondrian library: forests, kernel features, grids, Bayesian trees and baselines.

Depends on numpy, scipy, numba and scikit-learn's estimator API only; knows nothing of
Bayesian optimization.  One folder per family (``forest``, ``kernel``, ``grid``,
``bayes_trees``, ``baselines``) over a private shared core (``_core``: the tree store and its compiled
kernels, random streams, input checks).  Names are imported on first use (``import
surrogates`` stays cheap for Bayesian optimization, which needs only the regression forest).
"""

from ._core.exports import MovedModules, lazy_exports

_WHERE = {
    "MondrianForestRegressor": ".forest.regressor",
    "MondrianForestClassifier": ".forest.classifier",
    "MondrianKernel": ".kernel.features",
    "MondrianKernelRidge": ".kernel.ridge",
    "LifetimePath": ".kernel.paths",
    "lifetime_path": ".kernel.paths",
    "forest_lifetime_path": ".kernel.paths",
    "lifetime_from_lengthscale": ".kernel._common",
    "MondrianGrid": ".grid.estimator",
    "GridExploration": ".grid.estimator",
    "LaplaceKernelRidge": ".baselines.laplace",
    "laplace_kernel": ".baselines.laplace",
    "RandomFourierFeatures": ".baselines.random_features",
    "RandomBinningFeatures": ".baselines.random_features",
    "select_width": ".baselines.width_search",
    "SMACRandomForestRegressor": ".baselines.smac_forest",
    "SMCDecisionTreeClassifier": ".bayes_trees.smc",
    "SMCDecisionTreeRegressor": ".bayes_trees.smc",
    "BARTRegressor": ".bayes_trees.bart",
    "relative_error": ".metrics",
    "rmse": ".metrics",
}

__all__ = list(_WHERE)
__version__ = "0.1.0"
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)

# where moved modules live now (pickles name the module of each class they hold): the flat
# 0.1 layout, then the compiled kernels' modules renamed to ``_kernels`` / ``_<topic>_kernels``
# (a chain of moves resolves to the last place)
MovedModules.install({f"{__name__}.{old}": f"{__name__}.{new}" for old, new in {
    "_tree": "_core.tree", "_rng": "_core.rng", "_prefetch": "_core.prefetch",
    "_validation": "_core.validation", "_forest": "forest._base",
    "regressor": "forest.regressor", "classifier": "forest.classifier",
    "_regression": "forest._regression", "_classification": "forest._classification",
    "_kernel_core": "kernel._core", "_grid_core": "grid._core",
    "smac_forest": "baselines.smac_forest",
    "_core.rng": "_core._rng_kernels", "_core.sparse": "_core._sparse_kernels",
    "_core.prefetch": "_core._prefetch_kernels",
    "forest._regression": "forest._regression_kernels",
    "forest._classification": "forest._classification_kernels",
    "kernel._core": "kernel._kernels", "grid._core": "grid._kernels",
    "bayes_trees._bart_core": "bayes_trees._bart_kernels",
    "bayes_trees._smc_core": "bayes_trees._smc_kernels",
    "bayes_trees.prior": "bayes_trees._prior_kernels"}.items()})
