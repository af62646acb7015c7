"""An mfbo trial as an Optuna ``FrozenTrial``, and an mfbo study as an Optuna ``FrozenStudy``,
for the read-only view of a journal (:mod:`.view`).

The trial keeps its values as told (in the study's own direction, so no sign changes), its
intermediate values, its times, and only its active parameters: a parameter inactive under its
condition is absent from the trial, as in a define-by-run Optuna study.  A pending trial is
``RUNNING``.  User attributes follow :func:`~mfbo.integrations.optuna.to_optuna`: the mfbo trial
id, the error text of a failed trial and the extra fields (renamed only where they clash with
those two).
"""

from __future__ import annotations

import datetime

from optuna.study import StudyDirection
from optuna.study._frozen import FrozenStudy
from optuna.trial import FrozenTrial, TrialState

from ...results.result import unique_names
from ..optuna.distributions import distribution_of
from ..optuna.transfer import _STATES, MFBO_ATTRS, _storable

__all__ = ["frozen_trial", "frozen_study", "distributions_of", "directions_of", "values_of",
           "READ_ONLY_NOTE"]

#: what every study of the view says of itself (a user attribute the dashboard lists)
READ_ONLY_NOTE = ("a read-only view of an mfbo journal: the dashboard cannot change, "
                  "add or delete trials, notes or studies")


def directions_of(config: dict) -> list[StudyDirection]:
    """The Optuna directions of an mfbo study from its stored settings: ``directions`` when
    the study records several, else its one ``direction`` (minimise when not recorded)."""
    names = config.get("directions") or [config.get("direction", "minimize")]
    return [StudyDirection.MAXIMIZE if d == "maximize" else StudyDirection.MINIMIZE
            for d in names]


def values_of(trial) -> list[float] | None:
    """A complete trial's values as a list (its ``values`` when it has several, else its
    ``value``); None for any other state."""
    if trial.state != "complete":
        return None
    values = getattr(trial, "values", None)
    return [float(v) for v in values] if values is not None else [float(trial.value)]


def _time(seconds) -> datetime.datetime | None:
    return None if seconds is None else datetime.datetime.fromtimestamp(seconds)


def _constraints(trial) -> dict:
    """A trial's constraint values under Optuna's key for them (``constraints``, each ``<= 0``
    when met), when its study has constraints."""
    values = getattr(trial, "constraints", None)
    return {} if values is None else {"constraints": [float(v) for v in values]}


def distributions_of(space) -> dict:
    """The Optuna distribution of each dimension of ``space``, by name (one object each,
    shared by the trials of a study)."""
    return {n: distribution_of(n, d) for n, d in space.dimensions.items()}


def frozen_trial(trial, distributions: dict, trial_id: int) -> FrozenTrial:
    """The Optuna form of the mfbo ``trial`` of a study whose dimensions have the Optuna
    ``distributions`` (:func:`distributions_of`), with the Optuna trial id ``trial_id`` (its
    number is the mfbo trial id)."""
    state = _STATES.get(trial.state, TrialState.RUNNING)
    extra = trial.extra or {}
    keys = unique_names(extra, MFBO_ATTRS, "extra_")
    attrs = {keys[k]: _storable(v) for k, v in extra.items()}
    attrs["mfbo_trial_id"] = trial.id
    if trial.state == "failed":
        attrs["mfbo_error"] = trial.error
    params = dict(trial.params)
    start = trial.start if trial.start is not None else trial.asked_at
    return FrozenTrial(
        number=trial.id, state=state, value=None, values=values_of(trial),
        datetime_start=_time(start or None),
        datetime_complete=None if state == TrialState.RUNNING else _time(trial.end),
        params=params,
        distributions={n: distributions[n] for n in params},
        user_attrs=attrs, system_attrs=_constraints(trial),
        intermediate_values=dict(trial.intermediate_values), trial_id=trial_id)


def frozen_study(name: str, study_id: int, config: dict) -> FrozenStudy:
    """The Optuna summary of the mfbo study ``name`` with its stored settings ``config``."""
    directions = directions_of(config)
    attrs = {"read_only": READ_ONLY_NOTE}
    attrs.update({f"mfbo_{k}": _storable(v) for k, v in config.items()
                  if k not in ("direction", "directions", "objectives")})
    names = config.get("objectives")
    system = {"study:metric_names": list(names)} if names else {}  # Optuna's key for them
    return FrozenStudy(study_name=name, direction=None, directions=directions,
                       user_attrs=attrs, system_attrs=system, study_id=study_id)
