"""Running a study: the ask/tell :class:`Optimizer`, :func:`minimize` (one call), the
:func:`objective` decorator, the workers that evaluate trials in parallel, and the pruners
that stop trials early (:mod:`mfbo.optimize.pruners`, also ``mfbo.pruners``)."""

from .minimize import Objective, minimize, objective
from .optimizer import Optimizer, StudyExhausted

__all__ = ["Objective", "Optimizer", "StudyExhausted", "minimize", "objective"]
