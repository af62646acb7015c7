"""Pruners: rules that stop a trial early from the values it reported
(:meth:`mfbo.Optimizer.report`), asked by :meth:`mfbo.Optimizer.should_prune`.

The rules are Optuna's, decision for decision: :class:`MedianPruner` and
:class:`PercentilePruner` compare a trial with the complete trials at the same step;
:class:`SuccessiveHalvingPruner` (asynchronous successive halving, Li et al. 2020) and
:class:`HyperbandPruner` (Li et al. 2018) promote a trial from rung to rung while it is among the
best of those that reached the rung.  The rungs are recorded in the study's journal, so
parallel workers sharing a storage share them.  :class:`NopPruner` never prunes (the default).
:class:`MondrianPruner` is model-based: an online Mondrian forest over (configuration, budget),
fed every reported value, stops a trial it gives a low chance of beating the best complete
trial at full budget.
"""

from .base import Pruner
from .hyperband import HyperbandPruner
from .mondrian import MondrianPruner
from .nop import NopPruner
from .percentile import MedianPruner, PercentilePruner
from .successive_halving import SuccessiveHalvingPruner

__all__ = ["Pruner", "NopPruner", "MedianPruner", "PercentilePruner", "SuccessiveHalvingPruner",
           "HyperbandPruner", "MondrianPruner", "as_pruner"]


def as_pruner(pruner) -> Pruner:
    """``pruner`` checked: a :class:`Pruner`, or :class:`NopPruner` for None."""
    if pruner is None:
        return NopPruner()
    if not isinstance(pruner, Pruner):
        raise TypeError(f"pruner must be an mfbo.pruners.Pruner (MedianPruner(), "
                        f"SuccessiveHalvingPruner(), ...) or None, got "
                        f"{type(pruner).__name__}.")
    return pruner
