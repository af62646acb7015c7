"""The pruner that never prunes."""

from __future__ import annotations

from .base import Pruner

__all__ = ["NopPruner"]


class NopPruner(Pruner):
    """Never prunes: :meth:`~mfbo.Optimizer.should_prune` is always False (the default of
    :class:`mfbo.Optimizer` and :func:`mfbo.minimize`)."""

    def prune(self, study, trial) -> bool:
        return False
