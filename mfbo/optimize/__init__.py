"""Running a study: the ask/tell :class:`Optimizer`, :func:`minimize` (one call), the
:func:`objective` decorator, and the workers that evaluate trials in parallel."""

from .minimize import Objective, minimize, objective
from .optimizer import Optimizer, StudyExhausted

__all__ = ["Objective", "Optimizer", "StudyExhausted", "minimize", "objective"]
