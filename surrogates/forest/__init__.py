"""Mondrian forests: regression with empirical or exact Gaussian belief-propagation
posteriors (Lakshminarayanan, Roy & Teh, 2016) and classification with the hierarchical
normalized stable process (Lakshminarayanan, Roy & Teh, 2014)."""

from .._core.exports import lazy_exports

_WHERE = {"MondrianForestRegressor": ".regressor", "MondrianForestClassifier": ".classifier"}
__all__ = list(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
