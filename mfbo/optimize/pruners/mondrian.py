"""Model-based pruning: an online Mondrian forest over (configuration, budget) fed every reported
value, which stops a trial when it gives a low probability that the trial beats the incumbent at
full budget (:class:`MondrianPruner`; the rule itself is :class:`CurveForest`, shared with
:class:`mfbo.integrations.optuna.MondrianPruner`)."""

from __future__ import annotations

import bisect
import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..._core.arguments import check_int
from .base import Pruner
from .percentile import first_in_interval

__all__ = ["MondrianPruner", "CurveForest", "Curve"]


@dataclass(slots=True)
class Curve:
    """What the rule reads of one trial: ``key`` orders the trials (their ids), ``unit`` is the
    configuration in the unit cube, ``values`` maps each reported step to the value reported
    (a loss, or a score when ``sign`` is -1: the loss is ``sign * value``), ``final`` is the
    loss of a complete trial (None otherwise), ``finished`` whether the trial reports no
    more (complete or pruned)."""

    key: int
    unit: np.ndarray
    values: dict
    sign: float = 1.0
    final: float | None = None
    finished: bool = False


def check_probability(value, name: str) -> float:
    """``value`` checked: a number in (0, 1)."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool) \
            or not 0.0 < float(value) < 1.0:
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}.")
    return float(value)


class CurveForest:
    """The model-based rule: an online Mondrian forest over ``(configuration, budget)`` and the
    chance it gives a trial of beating the incumbent at full budget.

    The forest's inputs are the configuration's unit coordinates and the budget
    ``log(1 + step) / log(1 + max_resource)`` (1 at full budget); its target is the reported
    loss.  Every reported value is one ``partial_fit`` of one row, fed in the order of (trial
    key, step) of the reports found new at each decision, so that a study run by one process
    feeds its forest the same rows in the same order however often it asks, and a resumed
    study rebuilds the forest of the uninterrupted run.

    A trial whose latest loss is ``y`` at budget ``b`` is predicted to end at
    ``y + m(x, 1) - m(x, b)`` (its own value plus the improvement the forest expects from ``b``
    to full budget, ``m`` the forest's mean at configuration ``x``) with the forest's predictive
    standard deviation at ``(x, 1)``; its chance is the normal probability of a final loss
    below the incumbent's (the best loss of the complete trials).  Far from every reported
    value the forest reverts to its prior, so the chance becomes that of the trial's own latest
    value against the incumbent with the prior's spread.

    Parameters are :class:`MondrianPruner`'s.
    """

    def __init__(self, max_resource: int, threshold: float = 0.2, n_startup_trials: int = 3,
                 n_warmup_steps: int = 0, interval_steps: int = 1, *, n_min_trials: int = 1,
                 n_estimators: int = 10, min_samples_split: int = 5, seed: int | None = 0):
        self.max_resource = check_int(max_resource, "max_resource", minimum=1)
        self.threshold = check_probability(threshold, "threshold")
        self.n_startup_trials = check_int(n_startup_trials, "n_startup_trials", minimum=1)
        self.n_warmup_steps = check_int(n_warmup_steps, "n_warmup_steps", minimum=0)
        self.interval_steps = check_int(interval_steps, "interval_steps", minimum=1)
        self.n_min_trials = check_int(n_min_trials, "n_min_trials", minimum=1)
        self.n_estimators = check_int(n_estimators, "n_estimators", minimum=1)
        self.min_samples_split = check_int(min_samples_split, "min_samples_split", minimum=2)
        self.seed = check_int(seed, "seed", minimum=0, or_none=True)
        self.forest = None
        #: trial key -> the steps of it fed to the forest
        self.fed: dict[int, set] = {}
        #: keys of the finished trials read for good (their reports queued or fed)
        self.closed: set = set()
        self._collected: dict[int, set] = {}  # key -> steps queued or fed
        self._queue: list[tuple] = []  # (key, step, unit, loss) read and not yet fed
        self._incumbent = math.inf  # the best final loss of the complete trials
        self._complete_last: list[int] = []  # their last steps, sorted
        self._log_full = math.log1p(self.max_resource)

    def budget(self, step) -> np.ndarray:
        """The forest's budget coordinate of ``step`` (1 at ``max_resource``)."""
        return np.log1p(np.asarray(step, dtype=float)) / self._log_full

    # -- the forest ---------------------------------------------------------------------------
    def read(self, curves) -> None:
        """Queue the reports of ``curves`` not read before, and note the complete ones; a
        finished curve is read for good (its key joins :attr:`closed`, and a curve of a key
        in it is skipped)."""
        closed, collected, queue = self.closed, self._collected, self._queue
        for c in curves:
            if c.key in closed:
                continue
            seen = collected.get(c.key)
            if seen is None or len(seen) != len(c.values):
                seen = collected.setdefault(c.key, set())
                for s in c.values:
                    if s not in seen:
                        seen.add(s)
                        queue.append((c.key, s, c.unit, c.sign * c.values[s]))
            if c.finished:
                closed.add(c.key)
                if c.final is not None:
                    self._incumbent = min(self._incumbent, c.final)
                    bisect.insort(self._complete_last, max(c.values) if c.values else -1)

    def feed(self, curves=()) -> int:
        """Read ``curves`` (:meth:`read`) and feed the forest every report read and not yet
        fed, one row at a time in order of (key, step); how many were fed."""
        self.read(curves)
        queue = self._queue
        queue.sort(key=lambda r: (r[0], r[1]))
        n = 0
        try:
            for key, step, unit, loss in queue:
                self._partial_fit(unit, step, loss)
                self.fed.setdefault(key, set()).add(step)
                n += 1
        finally:
            del queue[:n]
        return n

    def _partial_fit(self, unit, step, loss) -> None:
        x = np.append(np.asarray(unit, dtype=float), self.budget(step))[None, :]
        if self.forest is None:
            # scikit-learn and numba: imported when the first row is fed, not by ``import mfbo``
            from surrogates import MondrianForestRegressor

            self.forest = MondrianForestRegressor(
                n_estimators=self.n_estimators, min_samples_split=self.min_samples_split,
                feature_bounds=[[0.0, 1.0]] * x.shape[1], random_state=self.seed)
        elif x.shape[1] != self.forest.n_features_in_:
            raise ValueError(f"a configuration of {x.shape[1] - 1} coordinates reported to a "
                             f"pruner whose forest has {self.forest.n_features_in_ - 1}; a "
                             f"pruner serves the trials of one search space.")
        self.forest.partial_fit(x, np.array([float(loss)]))

    def predict_final(self, unit, step: int, loss: float) -> tuple[float, float]:
        """The predicted final loss of a trial at ``unit`` whose latest loss is ``loss`` at
        ``step``, and its standard deviation (see the class)."""
        u = np.asarray(unit, dtype=float)
        X = np.vstack([np.append(u, self.budget(step)), np.append(u, 1.0)])
        mean, std = self.forest.predict(X, return_std=True)
        return float(loss + mean[1] - mean[0]), float(std[1])

    def chance(self, unit, step: int, loss: float, incumbent: float) -> float:
        """The probability that a trial at ``unit`` with ``loss`` at ``step`` ends with a loss
        below ``incumbent`` (fed forest needed)."""
        mean, std = self.predict_final(unit, step, loss)
        if not std > 0.0:
            return 1.0 if mean < incumbent else 0.0
        return 0.5 * math.erfc((mean - incumbent) / (std * math.sqrt(2.0)))

    # -- the decision -------------------------------------------------------------------------
    def should_prune(self, curves, trial: Curve) -> bool:
        """Whether ``trial`` (one of ``curves``, pending) should stop now."""
        step = max(trial.values) if trial.values else None
        if step is None or step < self.n_warmup_steps:
            return False
        if not first_in_interval(step, trial.values, self.n_warmup_steps, self.interval_steps):
            return False
        self.read(curves)
        n_reached = len(self._complete_last) - bisect.bisect_left(self._complete_last, step)
        if len(self._complete_last) < self.n_startup_trials or n_reached < self.n_min_trials:
            return False
        self.feed([trial])
        loss = trial.sign * trial.values[step]
        return self.chance(trial.unit, step, loss, self._incumbent) < self.threshold


class MondrianPruner(Pruner):
    """Stop a trial when an online Mondrian forest over (configuration, budget), fed every
    value the study's trials reported, gives it a probability below ``threshold`` of ending
    better than the best complete trial (:class:`CurveForest` says how).

    The forest is rebuilt from the study's reports (those of other processes too), so a
    resumed study or a second handle prunes as the first would; with one process, whenever
    it asks, the decisions depend only on the reports and ``seed``.  One pruner keeps a forest
    for each study name it is asked about: give two studies of the same name (in two
    storages) a pruner each.

    Parameters
    ----------
    max_resource : int
        The step a trial that is never pruned reaches (its full budget).
    threshold : float, default=0.2
        In (0, 1): a trial whose chance of beating the incumbent at full budget is below it
        is pruned.
    n_startup_trials, n_warmup_steps, interval_steps : int, default=3, 0, 1
        The warm-up and the steps a trial is judged at, as for :class:`PercentilePruner`.
    n_min_trials : int, default=1
        No trial is pruned at a step that fewer complete trials reached.
    n_estimators : int, default=10
        Trees of the forest.
    min_samples_split : int, default=5
        The forest's ``min_samples_split``.
    seed : int or None, default=0
        Seeds the forest (None: a fresh forest is random).
    """

    def __init__(self, max_resource: int, threshold: float = 0.2, n_startup_trials: int = 3,
                 n_warmup_steps: int = 0, interval_steps: int = 1, *, n_min_trials: int = 1,
                 n_estimators: int = 10, min_samples_split: int = 5, seed: int | None = 0):
        self._settings = dict(max_resource=max_resource, threshold=threshold,
                              n_startup_trials=n_startup_trials, n_warmup_steps=n_warmup_steps,
                              interval_steps=interval_steps, n_min_trials=n_min_trials,
                              n_estimators=n_estimators, min_samples_split=min_samples_split,
                              seed=seed)
        CurveForest(**self._settings)  # checks the settings
        #: study name -> its rule and forest
        self._rules: dict[str, CurveForest] = {}
        #: study name -> (trials seen, ids of those its rule may still read)
        self._open: dict[str, tuple[int, set]] = {}

    def rule(self, study_name: str) -> CurveForest:
        """The rule and forest of the study named ``study_name``."""
        if study_name not in self._rules:
            self._rules[study_name] = CurveForest(**self._settings)
        return self._rules[study_name]

    def prune(self, study, trial) -> bool:
        rule, sign = self.rule(study.study_name), study.sign
        # the trials the rule may still read: the new ones and those not read for good
        n_seen, open_ids = self._open.get(study.study_name, (0, set()))
        trials = study.trials
        open_ids.update(range(n_seen, len(trials)))
        open_ids.difference_update(rule.closed)
        open_ids.difference_update([i for i in open_ids
                                    if trials[i].state == "failed" or trials[i].unit is None])
        self._open[study.study_name] = (len(trials), open_ids)

        def curve(t) -> Curve:
            return Curve(t.id, t.unit, t.intermediate_values, sign,
                         sign * t.value if t.state == "complete" else None,
                         t.state != "pending")
        if trial.unit is None:
            return False
        return rule.should_prune([curve(trials[i]) for i in sorted(open_ids)], curve(trial))

    def __repr__(self):
        settings = ", ".join(f"{k}={v!r}" for k, v in self._settings.items())
        return f"MondrianPruner({settings})"
