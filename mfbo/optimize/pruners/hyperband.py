"""Hyperband (Li et al. 2018, "Hyperband: a novel bandit-based approach to hyperparameter
optimization"): several brackets of asynchronous successive halving, each with its own first
rung, so that some trials are judged early and others only late."""

from __future__ import annotations

import binascii
import math

from ..._core.arguments import check_int
from .base import Pruner
from .successive_halving import SuccessiveHalvingPruner

__all__ = ["HyperbandPruner"]


class HyperbandPruner(Pruner):
    """Hyperband over asynchronous successive halving, decision for decision Optuna's
    ``HyperbandPruner``.

    There are ``floor(log(max_resource / min_resource) / log(reduction_factor)) + 1``
    brackets; bracket ``s`` is a :class:`SuccessiveHalvingPruner` whose first rung is at step
    ``min_resource * reduction_factor ** s``, and its trials compete with the trials of the
    same bracket only.  A trial's bracket is drawn from its id and the study's name (a
    CRC32 hash, as Optuna does, so every process agrees), bracket ``s`` taking a share
    ``ceil(n * reduction_factor ** (n - 1 - s) / (n - s))`` of them (``n`` brackets): the
    brackets that judge early get more trials, as in the paper.

    Parameters
    ----------
    min_resource : int, default=1
        The first rung of the most aggressive bracket.
    max_resource : int
        The step a trial that is never pruned reaches (its full budget: epochs, rounds, ...).
    reduction_factor : int, default=3
        As for :class:`SuccessiveHalvingPruner` (at least 2).
    bootstrap_count : int, default=0
        As for :class:`SuccessiveHalvingPruner`.
    """

    records = True  # the rungs reached, as successive halving

    def __init__(self, min_resource: int = 1, *, max_resource: int, reduction_factor: int = 3,
                 bootstrap_count: int = 0):
        self._min_resource = check_int(min_resource, "min_resource", minimum=1)
        self._max_resource = check_int(max_resource, "max_resource", minimum=1)
        if self._max_resource < self._min_resource:
            raise ValueError(f"max_resource must be at least min_resource={min_resource}, got "
                             f"{max_resource!r}.")
        self._reduction_factor = check_int(reduction_factor, "reduction_factor", minimum=2)
        self._bootstrap_count = check_int(bootstrap_count, "bootstrap_count", minimum=0)
        n = math.floor(math.log(self._max_resource / self._min_resource,
                                self._reduction_factor)) + 1
        self._brackets = [SuccessiveHalvingPruner(self._min_resource, self._reduction_factor,
                                                  s, self._bootstrap_count) for s in range(n)]
        self._budgets = [math.ceil(n * self._reduction_factor ** (n - 1 - s) / (n - s))
                         for s in range(n)]
        #: (study name, trial id) -> bracket, so a decision hashes each trial once
        self._bracket_of: dict[tuple[str, int], int] = {}

    @property
    def n_brackets(self) -> int:
        return len(self._brackets)

    def bracket(self, study_name: str, trial_id: int) -> int:
        """The bracket of trial ``trial_id`` of study ``study_name``."""
        key = (study_name, trial_id)
        if key not in self._bracket_of:
            n = binascii.crc32(f"{study_name}_{trial_id}".encode()) % sum(self._budgets)
            s = 0
            while n >= self._budgets[s]:
                n -= self._budgets[s]
                s += 1
            self._bracket_of[key] = s
        return self._bracket_of[key]

    def prune(self, study, trial) -> bool:
        s = self.bracket(study.study_name, trial.id)
        same = [t for t in study.trials if self.bracket(study.study_name, t.id) == s]
        return self._brackets[s].judge(study, trial, same)

    def __repr__(self):
        return (f"HyperbandPruner(min_resource={self._min_resource}, max_resource="
                f"{self._max_resource}, reduction_factor={self._reduction_factor}, "
                f"bootstrap_count={self._bootstrap_count})")
