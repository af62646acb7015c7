"""What a finished optuna trial tells an mfbo study: its loss, or a failure."""

from __future__ import annotations

import math

from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

__all__ = ["loss_sign", "outcome", "times"]


def loss_sign(study, who: str) -> float:
    """+1 for a study that minimises, -1 for one that maximises (mfbo minimises a loss);
    a ``ValueError`` naming the study's directions for a multi-objective study."""
    directions = list(study.directions)
    if len(directions) != 1:
        raise ValueError(f"{who} handles single-objective studies only; study "
                         f"{study.study_name!r} has directions "
                         f"{[d.name for d in directions]}.  Use one objective, or a "
                         f"multi-objective sampler such as optuna.samplers.NSGAIISampler or "
                         f"TPESampler.")
    return -1.0 if directions[0] == StudyDirection.MAXIMIZE else 1.0


def outcome(trial: FrozenTrial, sign: float) -> tuple[float | None, str | None]:
    """``(loss, None)`` or ``(None, error)`` of a finished trial.

    A complete trial's loss is its value (negated when the study maximises).  A pruned trial's
    is its last reported intermediate value: the objective measured there when the pruner
    stopped it, an honest (and for a learning curve, pessimistic) value of the configuration;
    a trial pruned before reporting anything, and a failed trial, are failures.  A non-finite
    loss is a failure as well (mfbo's rule)."""
    if trial.state == TrialState.COMPLETE:
        value = trial.value
    elif trial.state == TrialState.PRUNED and trial.intermediate_values:
        value = trial.intermediate_values[max(trial.intermediate_values)]
    elif trial.state == TrialState.PRUNED:
        return None, "pruned by optuna before reporting a value"
    else:
        return None, f"optuna trial {trial.number} {trial.state.name.lower()}"
    if value is None or not math.isfinite(value):
        return None, f"optuna trial {trial.number} has the non-finite value {value}"
    return sign * float(value), None


def times(trial: FrozenTrial) -> dict:
    """``start`` and ``end`` (seconds since the epoch) of a trial, where known."""
    return {k: None if dt is None else dt.timestamp() for k, dt in
            (("start", trial.datetime_start), ("end", trial.datetime_complete))}
