"""Asynchronous successive halving (Li et al. 2020, "A system for massively parallel
hyperparameter tuning", Algorithm 2): a trial is promoted from rung to rung while it is among
the best ``1 / reduction_factor`` of the trials that reached the rung."""

from __future__ import annotations

from ..._core.arguments import check_int
from ...study.pruned import repeated
from .base import Pruner

__all__ = ["SuccessiveHalvingPruner", "COMPETITORS"]

#: whom a trial competes with at a rung (:class:`SuccessiveHalvingPruner`'s ``competitors``)
COMPETITORS = ("judged", "reported")


class SuccessiveHalvingPruner(Pruner):
    """Asynchronous successive halving, decision for decision Optuna's
    ``SuccessiveHalvingPruner``.

    Rung ``r`` is reached at step ``min_resource * reduction_factor ** (min_early_stopping_rate
    + r)``.  When asked about a trial whose latest step reaches its next rung, the pruner
    records the trial's latest value at that rung (a ``rung`` event of the journal, shared by
    every process of the study) and keeps the trial if that value is among the best
    ``1 / reduction_factor`` of the values recorded at the rung (the best one while fewer than
    ``reduction_factor`` trials reached it); otherwise the trial is pruned.  A trial reporting
    every step and asked after every report is thus judged at each rung once.

    Parameters
    ----------
    min_resource : int, default=1
        The step of the first rung (with ``min_early_stopping_rate=0``): a trial is never
        pruned before it.
    reduction_factor : int, default=3
        Rung ``r + 1`` is ``reduction_factor`` times as far as rung ``r``, and keeps that
        fraction of the trials (at least 2).
    min_early_stopping_rate : int, default=0
        Moves the first rung to ``min_resource * reduction_factor ** min_early_stopping_rate``.
    bootstrap_count : int, default=0
        A trial is pruned at a rung that no more than this many trials (itself included)
        reached: a rung is judged only once it holds enough trials.
    stop_repeats : int, default=0
        When positive, also prune a trial that reported at least this many steps, all with
        the values a complete trial reported there (:func:`mfbo.study.pruned.repeated`):
        trained deterministically, it would end where that one did, and it would tie it at
        every rung, which keeps it.  More steps tell a repeat from a distinct configuration
        that ties by chance (an accuracy on a small validation set); 0 never stops repeats.
    competitors : {"judged", "reported"}, default="judged"
        Whom a trial competes with at a rung: ``"judged"``, the trials judged there before
        (their recorded values, Optuna's rule); ``"reported"``, also every other pending
        trial that reported the rung's step without being judged there yet (by its value at
        that step), so that trials trained side by side to a rung before any is judged are
        judged together, as in synchronous successive halving.
    """

    records = True  # the rungs reached
    # a pruner pickled before these settings existed reads their defaults
    _competitors = "judged"
    _stop_repeats = 0

    def __init__(self, min_resource: int = 1, reduction_factor: int = 3,
                 min_early_stopping_rate: int = 0, bootstrap_count: int = 0,
                 stop_repeats: int = 0, competitors: str = "judged"):
        self._min_resource = check_int(min_resource, "min_resource", minimum=1)
        self._reduction_factor = check_int(reduction_factor, "reduction_factor", minimum=2)
        self._min_early_stopping_rate = check_int(min_early_stopping_rate,
                                                  "min_early_stopping_rate", minimum=0)
        self._bootstrap_count = check_int(bootstrap_count, "bootstrap_count", minimum=0)
        self._stop_repeats = check_int(stop_repeats, "stop_repeats", minimum=0)
        if competitors not in COMPETITORS:
            raise ValueError(f"competitors must be one of {COMPETITORS}, got "
                             f"{competitors!r}.")
        self._competitors = competitors

    def prune(self, study, trial) -> bool:
        return self.judge(study, trial, study.trials)

    def judge(self, study, trial, trials) -> bool:
        """Whether ``trial`` should stop, competing with those of ``trials`` (all the study's,
        or those of one bracket of :class:`~mfbo.pruners.HyperbandPruner`) at each rung."""
        step = trial.last_step
        if step is None:
            return False
        if 0 < self._stop_repeats <= len(trial.intermediate_values) \
                and repeated(trial, study.trials) is not None:
            return True
        value = trial.intermediate_values[step]
        sign = study.sign
        rung = len(trial.rungs)
        reported = self._competitors == "reported"
        while step >= (at := self._min_resource * self._reduction_factor ** (
                self._min_early_stopping_rate + rung)):
            # the other trials' values at this rung, and this one's (recorded for them)
            competing = []
            for t in trials:
                if t is trial:
                    continue
                if rung in t.rungs:
                    competing.append(sign * t.rungs[rung])
                elif reported and t.state == "pending" and at in t.intermediate_values:
                    competing.append(sign * t.intermediate_values[at])
            study.record_rung(trial, rung, value)
            competing.append(sign * value)
            if len(competing) <= self._bootstrap_count:
                return True
            keep = max(len(competing) // self._reduction_factor - 1, 0)
            if sign * value > sorted(competing)[keep]:
                return True
            rung += 1
        return False
