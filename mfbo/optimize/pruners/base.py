"""What a pruner is (:class:`Pruner`)."""

from __future__ import annotations

from ...study.study import Study
from ...study.trial import Trial

__all__ = ["Pruner"]


class Pruner:
    """A rule that says whether a pending trial should stop, from the values it and the other
    trials of the study reported.

    :meth:`prune` is called by :meth:`mfbo.Optimizer.should_prune` inside the study's
    transaction, after every event of the journal has been read: it may record what it decides
    (:meth:`mfbo.Study.record_rung`) and every process sharing the study sees it.
    """

    def prune(self, study: Study, trial: Trial) -> bool:
        """Whether ``trial`` (the study's own pending trial; read it, never change it) should
        stop now."""
        raise NotImplementedError

    def __repr__(self):
        settings = ", ".join(f"{k.lstrip('_')}={v!r}" for k, v in vars(self).items()
                             if not k.startswith("__"))
        return f"{type(self).__name__}({settings})"
