"""The Mondrian library: forests, kernel features, grids and baselines.

Depends on numpy, scipy, numba and scikit-learn's estimator API only; knows nothing of
Bayesian optimization.
"""

from .classifier import MondrianForestClassifier
from .regressor import MondrianForestRegressor

__all__ = ["MondrianForestClassifier", "MondrianForestRegressor"]
__version__ = "0.1.0"
