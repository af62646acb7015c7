"""Bayesian decision trees: top-down particle filters for decision trees (Lakshminarayanan, Roy
& Teh 2013; Lakshminarayanan 2016, chapter 3)."""

from .._core.exports import lazy_exports

_WHERE = {
    "SMCDecisionTreeClassifier": ".smc",
    "SMCDecisionTreeRegressor": ".smc",
}

__all__ = list(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
