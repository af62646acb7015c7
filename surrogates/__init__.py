"""The Mondrian library: forests, kernel features, grids and baselines.

Depends on numpy, scipy, numba and scikit-learn's estimator API only; knows nothing of
Bayesian optimization.
"""

from .baselines import (LaplaceKernelRidge, RandomBinningFeatures, RandomFourierFeatures,
                        laplace_kernel, select_width)
from .classifier import MondrianForestClassifier
from .grid import MondrianGrid
from .kernel import (LifetimePath, MondrianKernel, MondrianKernelRidge, forest_lifetime_path,
                     lifetime_from_lengthscale, lifetime_path, relative_error, rmse)
from .regressor import MondrianForestRegressor
from .smac_forest import SMACRandomForestRegressor

__all__ = ["MondrianForestClassifier", "MondrianGrid", "MondrianForestRegressor", "SMACRandomForestRegressor",
           # Mondrian kernel and its baselines
           "MondrianKernel", "MondrianKernelRidge", "LifetimePath", "lifetime_path",
           "forest_lifetime_path", "relative_error", "rmse", "lifetime_from_lengthscale",
           "LaplaceKernelRidge", "RandomFourierFeatures", "RandomBinningFeatures",
           "laplace_kernel", "select_width"]
__version__ = "0.1.0"
