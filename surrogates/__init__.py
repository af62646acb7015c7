"""The Mondrian library: forests, kernel features, grids and baselines.

Depends on numpy, scipy, numba and scikit-learn's estimator API only; knows nothing of
Bayesian optimization.
"""

from .classifier import MondrianForestClassifier
from .grid import MondrianGrid
from .regressor import MondrianForestRegressor
from .smac_forest import SMACRandomForestRegressor

__all__ = ["MondrianForestClassifier", "MondrianGrid", "MondrianForestRegressor", "SMACRandomForestRegressor"]
__version__ = "0.1.0"
