"""What a finished optuna trial tells an mfbo study: its loss, a failure, or a pruned trial with
its intermediate values."""

from __future__ import annotations

import math

from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

__all__ = ["loss_sign", "outcome", "times", "record_pending", "tell_finished"]


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
    """``(loss, None)`` or ``(None, error)`` of a complete or failed trial (a pruned one is
    told by :func:`tell_finished`).

    A complete trial's loss is its value (negated when the study maximises); a failed trial
    is a failure, and so is a non-finite loss (mfbo's rule)."""
    if trial.state == TrialState.COMPLETE:
        value = trial.value
    else:
        return None, f"optuna trial {trial.number} {trial.state.name.lower()}"
    if value is None or not math.isfinite(value):
        return None, f"optuna trial {trial.number} has the non-finite value {value}"
    return sign * float(value), None


def times(trial: FrozenTrial) -> dict:
    """``start`` and ``end`` (seconds since the epoch) of a trial, where known."""
    return {k: None if dt is None else dt.timestamp() for k, dt in
            (("start", trial.datetime_start), ("end", trial.datetime_complete))}


def record_pending(opt, params: dict) -> int:
    """Record a configuration evaluated by optuna as a new pending trial of ``opt``; its id."""
    study = opt.study
    params = study.space.validate(params)
    unit = study.space.to_unit([params])[0]
    cand = None if study.candidates is None else study.candidates.index_of(unit)
    with study.transaction():
        return study.add(params, unit, cand).id


def tell_finished(opt, trial_id: int, trial: FrozenTrial, sign: float) -> None:
    """Tell ``opt``'s pending trial ``trial_id`` how the optuna ``trial`` finished, with its
    optuna number in the ``optuna_number`` extra field, after reporting its finite
    intermediate values (times ``sign``).

    A pruned trial is a pruned trial of mfbo: the surrogate sees it as
    :attr:`mfbo.Study.obs` says, ranked below
    the complete trials (as Optuna's TPE ranks pruned trials), never as complete with its
    last intermediate value, which a learning curve makes look better than the final value
    it was stopped before reaching.  Complete and failed trials: see :func:`outcome`."""
    extra = {"optuna_number": trial.number}
    for step, v in sorted(trial.intermediate_values.items()):
        if v is not None and math.isfinite(v):
            opt.report(trial_id, step, sign * float(v))
    if trial.state == TrialState.PRUNED:
        opt.tell(trial_id, extra, state="pruned", **times(trial))
        return
    loss, error = outcome(trial, sign)
    opt.tell(trial_id, {"loss": loss, **extra}, error=error, **times(trial))
