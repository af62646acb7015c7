"""Bayesian decision trees: top-down particle filters for decision trees and Bayesian additive
regression trees with particle-Gibbs, Chipman-George-McCulloch and grow/prune samplers
(Lakshminarayanan, Roy & Teh 2013, 2015; Lakshminarayanan 2016, chapters 3 and 4)."""

from .._core.exports import lazy_exports

_WHERE = {
    "SMCDecisionTreeClassifier": ".smc",
    "SMCDecisionTreeRegressor": ".smc",
    "BARTRegressor": ".bart",
}

__all__ = list(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
