"""A study's state: the replay of its journal (:class:`Study`), its trials and what an
objective's return means, and who owns a pending trial (owner tokens, heartbeats)."""

from .study import CandidatesDiffer, Rows, Study, TrialFinished
from .trial import Trial, TrialPruned

__all__ = ["CandidatesDiffer", "Rows", "Study", "Trial", "TrialFinished", "TrialPruned"]
