"""What a finished optuna trial tells an mfbo study: its loss (or its losses, in a study of
several objectives, and its constraints' values), a failure, or a pruned trial with its
intermediate values."""

from __future__ import annotations

import math

from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

__all__ = ["loss_signs", "outcome", "times", "record_pending", "tell_finished",
           "CONSTRAINTS_KEY", "constraints_of"]

#: the system attribute where optuna's samplers keep the values of ``constraints_func``
CONSTRAINTS_KEY = "constraints"


def loss_signs(study) -> tuple[float, ...]:
    """+1 per objective the study minimises, -1 per one it maximises."""
    return tuple(-1.0 if d == StudyDirection.MAXIMIZE else 1.0 for d in study.directions)


def constraints_of(trial: FrozenTrial) -> tuple | None:
    """The constraint values recorded for ``trial`` (None where none were): those of a
    sampler's ``constraints_func`` and, with Optuna 5, those the objective set with
    ``trial.set_constraint(key, value)`` (Optuna's ``FrozenTrial.constraints``, in the order
    of their keys)."""
    named = getattr(trial, "constraints", None)
    if isinstance(named, dict):
        return tuple(float(named[k]) for k in sorted(named)) if named else None
    values = trial.system_attrs.get(CONSTRAINTS_KEY)
    return None if values is None else tuple(values)


def outcome(trial: FrozenTrial, signs: tuple) -> tuple:
    """``(losses, None)`` or ``(None, error)`` of a complete or failed trial (a pruned one is
    told by :func:`tell_finished`), ``signs`` holding one sign per objective (+1 minimised,
    -1 maximised: :func:`loss_signs`).

    A complete trial's losses are its values (each negated where the study maximises it); a
    failed trial is a failure, and so is a non-finite loss (mfbo's rule)."""
    if trial.state != TrialState.COMPLETE:
        return None, f"optuna trial {trial.number} {trial.state.name.lower()}"
    values = list(trial.values or [None])
    for v in values:
        if v is None or not math.isfinite(v):
            return None, f"optuna trial {trial.number} has the non-finite value {v}"
    return tuple(s * float(v) for s, v in zip(signs, values)), None


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


def tell_finished(opt, trial_id: int, trial: FrozenTrial, signs: tuple) -> None:
    """Tell ``opt``'s pending trial ``trial_id`` how the optuna ``trial`` finished, with its
    optuna number in the ``optuna_number`` extra field, after reporting its finite
    intermediate values (times the first objective's sign; ``signs``: one per objective,
    :func:`loss_signs`).

    A pruned trial is a pruned trial of mfbo: the surrogate sees it as
    :attr:`mfbo.Study.obs` says, ranked below
    the complete trials (as Optuna's TPE ranks pruned trials), never as complete with its
    last intermediate value, which a learning curve makes look better than the final value
    it was stopped before reaching.  Complete and failed trials: see :func:`outcome`; in a
    study with constraints (``opt.objectives.constraints``), a complete trial is told the
    values :func:`constraints_of` gives, and is failed without them."""
    extra = {"optuna_number": trial.number}
    for step, v in sorted(trial.intermediate_values.items()):
        if v is not None and math.isfinite(v):
            opt.report(trial_id, step, signs[0] * float(v))
    if trial.state == TrialState.PRUNED:
        opt.tell(trial_id, extra, state="pruned", **times(trial))
        return
    losses, error = outcome(trial, signs)
    # (a study of one objective is told its loss, one of several the tuple of them)
    loss = losses if losses is None or opt.study.objectives.multi else losses[0]
    names = opt.study.objectives.constraints
    if names and error is None:
        values = constraints_of(trial)
        if values is None or len(values) != len(names):
            loss, error = None, (f"optuna trial {trial.number} has no values for the "
                                 f"{len(names)} constraint(s) (constraints_func)")
        else:
            extra.update(zip(names, values))
    opt.tell(trial_id, {"loss": loss, **extra}, error=error, **times(trial))
