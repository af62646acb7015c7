"""What a pruner is (:class:`Pruner`)."""

from __future__ import annotations

from ...study.study import Study
from ...study.trial import Trial

__all__ = ["Pruner"]


class Pruner:
    """A rule that says whether a pending trial should stop, from the values it and the other
    trials of the study reported.

    :meth:`prune` is called by :meth:`mfbo.Optimizer.should_prune` after every event of the
    journal has been read.  A pruner that records what it decides (:attr:`records`, e.g. with
    :meth:`mfbo.Study.record_rung`) is called inside the study's transaction, so that every
    process sharing the study sees the decision and its record as one step; the others only
    read, and take no lock.
    """

    #: whether :meth:`prune` appends events to the journal
    records: bool = False

    def prune(self, study: Study, trial: Trial) -> bool:
        """Whether ``trial`` (the study's own pending trial; read it, never change it) should
        stop now."""
        raise NotImplementedError

    def __repr__(self):
        settings = ", ".join(f"{k.lstrip('_')}={v!r}" for k, v in vars(self).items()
                             if not k.startswith("__"))
        return f"{type(self).__name__}({settings})"
