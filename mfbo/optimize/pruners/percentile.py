"""Percentile rules: stop a trial whose best value so far is worse than a percentile of the
complete trials' values at the same step (:class:`PercentilePruner`; :class:`MedianPruner` is
the 50th percentile)."""

from __future__ import annotations

import numbers

import numpy as np

from ..._core.arguments import check_int
from .base import Pruner

__all__ = ["PercentilePruner", "MedianPruner"]


def first_in_interval(step: int, steps, n_warmup_steps: int, interval_steps: int) -> bool:
    """Whether ``step`` is the first step reported since the latest pruning step at or below
    it (the steps ``n_warmup_steps + k * interval_steps``): a trial reporting irregularly is
    judged once per interval, at the first report that reaches it."""
    latest = (step - n_warmup_steps) // interval_steps * interval_steps + n_warmup_steps
    before = max((s for s in steps if s != step), default=-1)
    return before < latest


class PercentilePruner(Pruner):
    """Stop a trial whose best reported value is worse than the ``percentile``-th best of the
    complete trials' values at its latest step (Optuna's ``PercentilePruner``, decision for
    decision).

    Parameters
    ----------
    percentile : float
        In [0, 100]: a trial goes on while its best value is within the best ``percentile``
        per cent of the complete trials' values at the same step (25 keeps the top quarter;
        50, :class:`MedianPruner`, the better half).
    n_startup_trials : int, default=5
        No trial is pruned until this many trials are complete.
    n_warmup_steps : int, default=0
        No trial is pruned at a step below this.
    interval_steps : int, default=1
        Trials are judged at steps ``n_warmup_steps + k * interval_steps`` (at the first step
        reported at or after each).
    n_min_trials : int, default=1
        No trial is pruned at a step that fewer complete trials reported.
    """

    def __init__(self, percentile: float, n_startup_trials: int = 5, n_warmup_steps: int = 0,
                 interval_steps: int = 1, *, n_min_trials: int = 1):
        if not isinstance(percentile, numbers.Real) or isinstance(percentile, bool) \
                or not 0.0 <= percentile <= 100.0:
            raise ValueError(f"percentile must be a number in [0, 100], got {percentile!r}.")
        self._percentile = float(percentile)
        self._n_startup_trials = check_int(n_startup_trials, "n_startup_trials", minimum=0)
        self._n_warmup_steps = check_int(n_warmup_steps, "n_warmup_steps", minimum=0)
        self._interval_steps = check_int(interval_steps, "interval_steps", minimum=1)
        self._n_min_trials = check_int(n_min_trials, "n_min_trials", minimum=1)

    def prune(self, study, trial) -> bool:
        complete = [t for t in study.trials if t.state == "complete"]
        if not complete or len(complete) < self._n_startup_trials:
            return False
        step = trial.last_step
        if step is None or step < self._n_warmup_steps:
            return False
        if not first_in_interval(step, trial.intermediate_values, self._n_warmup_steps,
                                 self._interval_steps):
            return False
        maximise = study.direction == "maximize"
        reported = list(trial.intermediate_values.values())
        best = max(reported) if maximise else min(reported)
        at_step = [t.intermediate_values[step] for t in complete
                   if step in t.intermediate_values]
        if len(at_step) < self._n_min_trials:
            return False
        # the percentile of the values as told, from the best (as Optuna computes it)
        q = 100.0 - self._percentile if maximise else self._percentile
        p = float(np.percentile(np.asarray(at_step, dtype=float), q))
        return best < p if maximise else best > p


class MedianPruner(PercentilePruner):
    """Stop a trial whose best reported value is worse than the median of the complete
    trials' values at its latest step (Optuna's ``MedianPruner``); the parameters are
    :class:`PercentilePruner`'s."""

    def __init__(self, n_startup_trials: int = 5, n_warmup_steps: int = 0,
                 interval_steps: int = 1, *, n_min_trials: int = 1):
        super().__init__(50.0, n_startup_trials, n_warmup_steps, interval_steps,
                         n_min_trials=n_min_trials)

    def __repr__(self):
        return (f"MedianPruner(n_startup_trials={self._n_startup_trials}, n_warmup_steps="
                f"{self._n_warmup_steps}, interval_steps={self._interval_steps}, "
                f"n_min_trials={self._n_min_trials})")
