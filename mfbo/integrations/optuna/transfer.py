"""Finished trials from an optuna study into mfbo, and from mfbo into an optuna study."""

from __future__ import annotations

import datetime
import json

import optuna
from optuna.trial import TrialState

from ...optimize.optimizer import Optimizer
from ...results.result import unique_names
from ...space import Space, as_space
from ...storage import to_json
from .distributions import dimension_of, distribution_of, user_value
from .outcomes import CONSTRAINTS_KEY, constraints_of, loss_signs, record_pending, \
    tell_finished
from .structure import Structure, decoded, infer_structure

__all__ = ["from_optuna", "to_optuna"]


def _params_in(space: Space, params: dict) -> dict | None:
    """``params`` restricted to ``space`` and valid there (every parameter active under its
    conditions, no other), or None."""
    try:
        return space.validate({n: user_value(d, params[n]) for n, d in space.dimensions.items()
                               if n in params})
    except (TypeError, ValueError):
        return None


def _inferred_space(trials: list) -> dict | None:
    """The space of complete ``trials`` as :func:`from_optuna` infers it: ``name ->
    dimension``, or None when they have no parameters."""
    structure = infer_structure(trials)[0]
    dists = dict(structure.distributions)
    # single-valued parameters that every trial has are kept (constant values)
    for name, d in trials[0].distributions.items() if trials else ():
        if d.single() and all(t.distributions.get(name) == d for t in trials):
            dists[name] = d
    if not dists:
        return None
    bad = [n for n in dists if not n.isidentifier()]
    if bad:
        raise ValueError(f"optuna parameter name(s) {bad} are not Python identifiers, which "
                         f"mfbo parameter names must be; pass space=... with other names "
                         f"and rename the parameters in your objective.")
    conditions = {n: None if c is None else decoded(c, dists)
                  for n, c in structure.conditions.items()}
    order = Structure(dists, conditions).ordered()
    return {n: dimension_of(n, dists[n], conditions.get(n)) for n in order}


def from_optuna(study, space=None, **optimizer_options) -> Optimizer:
    """An :class:`mfbo.Optimizer` warm-started with the finished trials of an optuna study, to
    go on with mfbo's ask/tell (:meth:`~mfbo.Optimizer.result` gives the results so far).

    Parameters
    ----------
    study : optuna.Study
        A study of one objective or several (the optimizer gets its ``directions``), with
        constraints where a sampler's ``constraints_func`` recorded them (the optimizer gets
        one constraint per value, named ``constraint_0``, ...).
    space : dict, Space or None, default=None
        The mfbo space to search.  None: the conditional space that
        :class:`~mfbo.integrations.optuna.MondrianSampler` infers from the complete trials of
        a define-by-run objective (:mod:`~mfbo.integrations.optuna.structure`): every
        parameter they have with one distribution throughout, active where the condition
        inferred for it holds (``when=In("model", ["svm"])``; a parameter present in every
        trial always), and the single-valued parameters of every trial; a parameter whose
        presence nothing explains is left out.  Each distribution is a dimension as
        :func:`~mfbo.integrations.optuna.distributions.dimension_of` translates it: float and
        int ranges keep ``log``; a range with a ``step`` is an :class:`~mfbo.Ordinal` of its
        values (the plain range beyond 10,000 values); a categorical distribution, and a
        single-valued one, a :class:`~mfbo.Categorical`.  Parameter names must be Python
        identifiers, as mfbo's are.
    **optimizer_options
        Arguments of :class:`mfbo.Optimizer` (``surrogate``, ``random_state``, ``storage``,
        ...).

    The optimizer has the study's direction, and is told the values as optuna recorded them:
    a complete trial its value, a pruned trial as pruned with its intermediate values, a
    failed one as failed; each with its start and end times and its optuna number in the
    ``optuna_number`` extra field.  Trials lacking a parameter active in the
    space, holding one inactive there, or with a value outside it (other ranges), and running
    or waiting trials, are left out.  A ``storage`` that already holds trials of the study
    name is refused, so that no trial is told twice.
    """
    directions = ["maximize" if s < 0 else "minimize" for s in loss_signs(study)]
    direction = directions[0] if len(directions) == 1 else None
    if optimizer_options.get("direction", direction) != direction:
        raise ValueError(f"direction={optimizer_options['direction']!r} differs from the "
                         f"direction of study {study.study_name!r} ({direction!r}); leave it "
                         f"out: the study's is used.")
    optimizer_options.pop("direction", None)
    for key in ("directions", "constraints"):
        if key in optimizer_options:
            raise ValueError(f"{key}={optimizer_options[key]!r} is taken from study "
                             f"{study.study_name!r}; leave it out.")
    trials = study.get_trials(deepcopy=False,
                              states=(TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL))
    n_constraints = next((len(c) for c in map(constraints_of, trials) if c is not None), 0)
    if len(directions) > 1:
        optimizer_options["directions"] = directions
    else:
        optimizer_options["direction"] = directions[0]
    if n_constraints:
        optimizer_options["constraints"] = [f"constraint_{i}" for i in range(n_constraints)]
    if space is None:
        dims = _inferred_space([t for t in trials if t.state == TrialState.COMPLETE])
        if dims is None:
            raise ValueError(f"study {study.study_name!r} has no complete trial with parameters "
                             f"to take the search space from; pass space=...")
        space = Space(dims)
    else:
        space = as_space(space)
    opt = Optimizer(space, **optimizer_options)
    if opt.n_trials:
        opt.close()
        raise ValueError(f"the optimizer's storage already holds {opt.n_trials} trial(s) of "
                         f"study {opt.study_name!r}; warm-start a new study (another "
                         f"study_name or storage) so that no optuna trial is told twice.")
    for t in trials:
        params = _params_in(space, t.params)
        if params is None:
            continue
        tell_finished(opt, record_pending(opt, params), t, (1.0,) * len(directions))
    return opt


#: the optuna state of each state of a finished mfbo trial
_STATES = {"complete": TrialState.COMPLETE, "failed": TrialState.FAIL,
           "pruned": TrialState.PRUNED}

#: the user attributes mfbo writes on every trial it adds to an optuna study
MFBO_ATTRS = ("mfbo_trial_id", "mfbo_error")


def _storable(v):
    """``v`` if JSON (which optuna's storages keep user attributes in) can hold it, else its
    JSON form as mfbo's journal writes it (numpy values numbers, other objects their
    ``repr``), else its ``repr``."""
    try:
        json.dumps(v)
        return v
    except (TypeError, ValueError, RecursionError):
        pass
    try:
        return json.loads(to_json(v))
    except (TypeError, ValueError, RecursionError):
        return repr(v)


def to_optuna(result, study=None, *, storage=None, study_name: str | None = None):
    """The finished trials of an mfbo result (:class:`mfbo.OptimizeResult`) added to an optuna
    study, e.g. to look at them in optuna-dashboard or to go on with an optuna sampler.

    Parameters
    ----------
    result : OptimizeResult
    study : optuna.Study or None, default=None
        The study to add the trials to (as many objectives as the result; a value is negated
        where its direction is not the result's).  None: a new study with the result's
        directions made by ``optuna.create_study`` with ``storage`` and ``study_name``.
    storage, study_name : optional
        For the new study only.

    Each complete trial becomes a ``COMPLETE`` trial with its value (its values, with several
    objectives; its constraints' values in the system attribute ``"constraints"``, where
    optuna's samplers keep them), each pruned one a
    ``PRUNED`` trial, each failed one a ``FAIL`` trial (its error text in the user attribute
    ``mfbo_error``), each with its intermediate values; pending trials are left out.
    Distributions: :class:`~mfbo.Real` is a ``FloatDistribution``,
    :class:`~mfbo.Integer` an ``IntDistribution`` (``log`` kept), :class:`~mfbo.Categorical`
    and :class:`~mfbo.Ordinal` a ``CategoricalDistribution``; in a conditional space a
    trial has its active parameters only.  The user attributes hold the
    mfbo trial id (``mfbo_trial_id``) and the extra fields the objective returned, each
    under its own key unless that is one of mfbo's (``mfbo_trial_id``, ``mfbo_error``, which
    always hold mfbo's values): then ``extra_<key>``, prefixed again while that is the key
    of another extra field (the rule of :meth:`mfbo.OptimizeResult.to_dataframe`; one key
    per field for the whole result).  A field JSON cannot store is kept as its text.  Start
    and end times are kept.  Returns the study.
    """
    objectives = result.objectives
    if study is None:
        study = optuna.create_study(storage=storage, study_name=study_name,
                                    directions=list(objectives.directions))
    elif storage is not None or study_name is not None:
        raise ValueError("storage and study_name are for a new study; they cannot be given "
                         "with study.")
    theirs = loss_signs(study)
    if len(theirs) != objectives.k:
        raise ValueError(f"study {study.study_name!r} has {len(theirs)} objective(s); the "
                         f"result has {objectives.k}.")
    # each objective's: the study's loss sign times the result's, -1 where they differ
    signs = [a * b for a, b in zip(theirs, objectives.signs)]
    sign = signs[0]
    space = result.space
    dists = {n: distribution_of(n, d) for n, d in space.dimensions.items()}
    keys = unique_names(dict.fromkeys(k for t in result.trials for k in (t.extra or {})),
                        MFBO_ATTRS, "extra_")
    frozen = []
    for t in result.trials:
        if t.state not in _STATES:
            continue
        attrs = {keys[k]: _storable(v) for k, v in (t.extra or {}).items()}
        attrs["mfbo_trial_id"] = t.id
        if t.state == "failed":
            attrs["mfbo_error"] = t.error
        values = None if t.state != "complete" else [s * v for s, v in zip(signs, t.values)]
        ft = optuna.trial.create_trial(
            state=_STATES[t.state], values=values,
            params={n: t.params[n] for n in space.names if n in t.params},
            distributions={n: dists[n] for n in space.names if n in t.params},
            user_attrs=attrs, system_attrs={} if t.constraints is None else
            {CONSTRAINTS_KEY: list(t.constraints)},
            intermediate_values={s: sign * v for s, v in t.intermediate_values.items()})
        start = t.start if t.start is not None else t.asked_at
        if t.end is not None and 0 < start <= t.end:
            ft.datetime_start = datetime.datetime.fromtimestamp(start)
            ft.datetime_complete = datetime.datetime.fromtimestamp(t.end)
        frozen.append(ft)
    study.add_trials(frozen)
    return study
