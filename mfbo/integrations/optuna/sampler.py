"""An optuna sampler whose relative sampling is mfbo's Bayesian optimisation."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import numpy as np
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.trial import FrozenTrial, TrialState

from ..._core.arguments import check_int
from ...optimize.optimizer import Optimizer, StudyExhausted
from ...space import Real, Space
from .distributions import Codec
from .outcomes import (CONSTRAINTS_KEY, constraints_of, loss_signs, record_pending,
                       tell_finished)
from .structure import ConditionalSearchSpace, Structure, renamed

__all__ = ["MondrianSampler"]

_logger = logging.getLogger(__name__)

#: system attribute of a trial holding the parameters the sampler proposed for it (JSON, in
#: chunks short enough for every optuna storage), so that other processes sharing the storage
#: know a running trial's whole configuration before its objective has asked for all of it
PROPOSAL_KEY = "mfbo:relative_params"
_CHUNK = 2045

#: Optimizer arguments the sampler sets itself
_RESERVED = {"space": "the search space is optuna's", "random_state": "use seed",
             "n_initial": "use n_startup_trials", "candidates": "the search space is optuna's",
             "storage": "the optuna study's storage is the shared one",
             "study_name": "the optuna study names the study",
             "direction": "the optuna study's direction is used",
             "directions": "the optuna study's directions are used",
             "constraints": "use constraints_func"}

_STATES = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL, TrialState.RUNNING)


def _fresh_seed() -> int:
    return int(np.random.SeedSequence().entropy)


def _proposed_params(trial: FrozenTrial) -> dict:
    """A running trial's parameters: those its objective has asked for, over those the sampler
    proposed for it (stored under :data:`PROPOSAL_KEY`)."""
    chunks, i = [], 0
    while (chunk := trial.system_attrs.get(f"{PROPOSAL_KEY}:{i}")) is not None:
        chunks.append(chunk)
        i += 1
    try:
        params = json.loads("".join(chunks)) if chunks else {}
    except ValueError:
        params = {}
    if not isinstance(params, dict):
        params = {}
    params.update(trial.params)
    return params


class _Mirror:
    """The trials of one optuna study over one relative search space, as an mfbo study.

    Every optuna trial whose relative parameters are known (those active under the conditions
    of the :class:`~.structure.Structure`, and no others) is one mfbo trial, keyed by the optuna
    trial number: pending while it runs (so the constant liar of the optimizer accounts for
    it), told exactly once when it finishes.  The mfbo study lives in memory, private to this
    sampler; the optuna storage is the record that processes share.
    """

    def __init__(self, structure: Structure, seed: int, n_initial: int | None, surrogate,
                 options: dict, n_objectives: int = 1, n_constraints: int = 0):
        names = structure.ordered()
        # the names of the mfbo space are positional: optuna's may be any string
        self.keys = [f"p{i}" for i in range(len(names))]
        key_of = dict(zip(names, self.keys))
        self.codecs = {}
        for name in names:
            when = structure.conditions[name]
            self.codecs[name] = Codec(structure.distributions[name],
                                      None if when is None else renamed(when, key_of))
        self.space = Space({k: c.dimension for k, c in zip(self.keys, self.codecs.values())})
        outcomes = {}  # several objectives (as losses) and constraints, as the study has them
        if n_objectives > 1:
            outcomes["directions"] = ["minimize"] * n_objectives
        if n_constraints:
            outcomes["constraints"] = [f"constraint_{i}" for i in range(n_constraints)]
        self.optimizer = Optimizer(self.space, surrogate=surrogate, random_state=seed,
                                   n_initial=n_initial, **outcomes, **options)
        #: optuna trial number -> mfbo trial id (pending or finished)
        self.ids: dict[int, int] = {}
        #: optuna trial numbers that are finished and dealt with (told, or not expressible)
        self.done: set[int] = set()
        #: every trial numbered below this is in ``done``: :meth:`sync` never looks at them
        #: again, so a relative sample costs O(trials since the oldest unfinished one), not
        #: O(all trials)
        self.settled = 0

    def _active(self) -> list:
        """``(key, name, codec, condition)`` of each relative parameter, in the space's order."""
        return [(key, name, codec, self.space.dimensions[key].when)
                for key, (name, codec) in zip(self.keys, self.codecs.items())]

    def encode(self, params: dict, distributions: dict) -> dict | None:
        """The mfbo parameters of an optuna trial's, or None unless every relative parameter
        active under the conditions is there, from the same distribution, with a valid value,
        and no inactive one is."""
        out = {}
        for key, name, codec, when in self._active():
            if when is not None and not when.holds(out):
                if name in params:
                    return None
                continue
            if name not in params:
                return None
            given = distributions.get(name)
            if given is not None and given != codec.distribution:
                return None
            value = codec.encode(params[name])
            if value is None:
                return None
            out[key] = value
        return out

    def decode(self, params: dict) -> dict:
        """The optuna parameters of mfbo parameters (the active ones)."""
        return {name: codec.decode(params[key])
                for key, (name, codec) in zip(self.keys, self.codecs.items()) if key in params}

    def sync(self, trials: list[FrozenTrial], current: int, signs: tuple) -> bool:
        """Tell the optimizer what it has not seen of ``trials`` (all but trial ``current``, in
        the order of their numbers, as optuna's storages return them and its
        ``IntersectionSearchSpace`` assumes): finished trials once, running ones as pending.

        False, and nothing more is told, when a trial proposed as a pending one finished
        having run with other relative parameters (its objective took another branch than the
        proposal, or enqueued or independently drawn values replaced proposed ones): the
        pending trial cannot be told, the mirror must be built again."""
        opt = self.optimizer
        fresh = []
        for t in reversed(trials):  # the trials not settled yet are at the end of the list
            if t.number < self.settled:
                break
            fresh.append(t)
        for t in reversed(fresh):
            n = t.number
            if n in self.done or n == current or t.state not in _STATES:
                continue
            if t.state == TrialState.RUNNING:
                if n not in self.ids:
                    params = self.encode(_proposed_params(t), t.distributions)
                    if params is not None:
                        self.ids[n] = record_pending(opt, params)
                continue
            params = self.encode(t.params, t.distributions)
            if n in self.ids:
                # (a trial not expressible here, e.g. one that failed half-way, is told as
                # proposed)
                proposed = self.decode(opt.study.trials[self.ids[n]].params)
                if params is not None and params != self.encode(proposed, {}):
                    return False
                tell_finished(opt, self.ids[n], t, signs)
            elif params is not None:
                self.ids[n] = record_pending(opt, params)
                tell_finished(opt, self.ids[n], t, signs)
            self.done.add(n)
        while self.settled in self.done:
            self.done.discard(self.settled)
            self.settled += 1
        return True

    def propose(self, trial: FrozenTrial) -> dict:
        """The optimizer's proposal for ``trial`` (pending from now on), as optuna parameters;
        ``{}`` when a finite space has nothing left to propose."""
        opt = self.optimizer
        if trial.number in self.ids:  # asked again for the same trial: the same answer
            return self.decode(opt.study.trials[self.ids[trial.number]].params)
        # parameters enqueued with the trial win over the proposal: record what will be run
        fixed = {}
        for key, (name, codec) in zip(self.keys, self.codecs.items()):
            if name in (trial.system_attrs.get("fixed_params") or {}):
                value = codec.encode(trial.system_attrs["fixed_params"][name])
                if value is not None:
                    fixed[key] = value
        try:
            if not fixed:
                tid = opt.ask().id
            else:
                with opt.study.transaction():
                    opt.refresh()
                    proposal, _ = opt.proposer.propose(opt.study)
                    if proposal is None:
                        return {}
                    params = self._merged(proposal[0], fixed)
                    if params is None:
                        # the enqueued values choose a branch the proposal has no values for:
                        # the objective draws those independently, and the trial is told as
                        # it ran when it finishes
                        return self.decode({**proposal[0], **fixed})
                    tid = record_pending(opt, params)
        except StudyExhausted:
            return {}
        self.ids[trial.number] = tid
        return self.decode(opt.study.trials[tid].params)

    def _merged(self, proposal: dict, fixed: dict) -> dict | None:
        """The configuration of ``fixed`` values, and the proposal's for the others, with the
        parameters inactive under it left out; None if an active one has no value."""
        out = {}
        for key, _, _, when in self._active():
            if when is None or when.holds(out):
                value = fixed.get(key, proposal.get(key))
                if value is None:
                    return None
                out[key] = value
        return out


class MondrianSampler(BaseSampler):
    """An optuna sampler proposing with mfbo's Bayesian optimisation (an online Mondrian forest
    by default).

    Define-by-run objectives are searched as a conditional space.  Every parameter the
    complete trials have shown, with one distribution throughout, is sampled jointly by an
    :class:`mfbo.Optimizer`: one present in every complete trial is always active; one that
    some lack is active under a condition inferred from the history
    (:mod:`~mfbo.integrations.optuna.structure`): the earliest categorical parameter whose
    values explain exactly which trials hold it (``In(model, ["svm"])``), else an integer one
    (``Greater(n_layers, 2)``), else a pair of categorical ones.  The optimizer's space is an
    mfbo conditional space (an inactive parameter at ``Space.inactive_unit``), so one forest
    learns from every branch.  A proposal gives values for the parameters active on its branch;
    the objective asks for them in its own order.  A parameter that is new (the first trial's
    are all new), whose distribution changes, or whose presence nothing explains, is sampled
    by ``independent_sampler``, as is a parameter the objective asks for although the proposal
    made it inactive (its branch disagrees with the inferred conditions); the trial is then
    told with the parameters it ran with, and the conditions are inferred again.

    How the study reaches the optimizer.  The sampler keeps a private mfbo study mirroring the
    optuna study: at every relative sample it reads the study's trials and tells the optimizer
    only those whose numbers it has not told yet, so the forest is updated incrementally (one
    ``partial_fit`` per new trial), never refit, also when several processes share an optuna
    RDB or journal storage: each process's sampler tells its own optimizer every trial once,
    whichever process ran it.

    - A complete trial is told its value (negated when the study maximises).
    - A pruned trial is a pruned trial of mfbo, with its intermediate values (negated when
      the study maximises): with ``on_failure="worst"`` the surrogate sees it as the larger of
      its last intermediate loss and the worst loss so far, ranked below the complete trials
      as optuna's TPE ranks pruned trials (never as complete with its last intermediate
      value, which for a learning curve is better than the final value it did not reach).
      A failed trial is seen as the worst loss so far (like SMAC's crash cost).  With
      ``on_failure="ignore"`` (optuna's own samplers' convention for failures) neither is
      seen.  With ``on_failure="infeasible"`` a failed trial is modelled as infeasible, as a
      constraint of its own (:class:`mfbo.Optimizer`; the default, ``"auto"``, takes it for
      studies of several objectives or with constraints, and ``"worst"`` otherwise).
    - A running trial (of this or another process or thread) is a pending trial, so the
      proposal accounts for it by the optimizer's ``batch_strategy`` (a constant liar by
      default).  The sampler stores each proposal in the trial's system attributes (as
      optuna's GPSampler does), so other processes see a running trial's whole configuration.
    - Parameters enqueued with a trial (``study.enqueue_trial``) replace the proposal's.
    - When the relative search space or its conditions change (a parameter appears, changes
      its range, or is present where its condition does not hold), the optimizer is rebuilt
      once from all trials of the study, as it is after :meth:`reseed_rng`, after unpickling
      the sampler, and when a trial proposed by it finished with other relative parameters
      than proposed (so every trial is told as it ran).

    A float or int distribution with a ``step`` is searched as the index of its grid, a
    categorical one as the index of its choice, so every proposed value is a valid value of
    its distribution; ``log`` is kept.

    Parameters
    ----------
    seed : int or None, default=None
        Seeds the optimizer (its initial design, surrogate and proposals) and the default
        independent sampler.  None: a random seed.
    n_startup_trials : int or None, default=None
        Trials (counted over the whole study) taken from the surrogate's space-filling initial
        design before the surrogate proposes; None: the surrogate's recipe's
        (``5 * D`` Sobol points for the Mondrian forest, ``D`` the number of parameters of the
        relative search space, those of every branch counted: it grows as branches appear).
    surrogate : str, Recipe or estimator, default="mondrian"
        As for :class:`mfbo.Optimizer` (``"mondrian"``, ``"rf-smac"``, ``"random"``, ...).
    independent_sampler : optuna sampler or None, default=None
        Samples the parameters outside the relative search space.  None:
        ``optuna.samplers.RandomSampler(seed=seed)``.
    warn_independent_sampling : bool, default=True
        Log a warning (once per parameter name) when a parameter that complete trials have
        shown is sampled independently because its distribution changed or nothing explains
        where it is present (not for a parameter no complete trial has shown yet).
    **optimizer_options
        Further arguments of :class:`mfbo.Optimizer`: ``acquisition``, ``kappa``,
        ``batch_strategy``, ``liar``, ``on_failure``, ``surrogate_options``, ...

    constraints_func : callable or None, default=None
        As optuna's samplers take it: ``constraints_func(frozen_trial)`` returns a sequence
        of values, each ``<= 0`` when met, computed after each complete or pruned trial and
        kept in the trial's system attributes under ``"constraints"`` (where optuna's
        samplers keep theirs: ``study.best_trials`` and optuna's plots read it).  With
        Optuna 5 the objective may instead call ``trial.set_constraint(key, value)``: those
        are read too (optuna's ``FrozenTrial.constraints``).  The optimizer models each
        constraint (:class:`mfbo.Optimizer`'s ``constraints``) and proposes where they are
        likely met.

    Multi-objective studies are searched as :class:`mfbo.Optimizer` searches several
    objectives (each objective's loss, negated where the study maximises it).
    """

    def __init__(self, *, seed: int | None = None, n_startup_trials: int | None = None,
                 surrogate: Any = "mondrian", independent_sampler: BaseSampler | None = None,
                 warn_independent_sampling: bool = True, constraints_func=None,
                 **optimizer_options):
        check_int(seed, "seed", minimum=0, or_none=True)
        check_int(n_startup_trials, "n_startup_trials", minimum=0, or_none=True)
        if constraints_func is not None and not callable(constraints_func):
            raise TypeError(f"constraints_func must be callable or None, got "
                            f"{constraints_func!r}.")
        self._constraints_func = constraints_func
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise TypeError(f"independent_sampler must be an optuna sampler or None, got "
                            f"{independent_sampler!r}.")
        for name, why in _RESERVED.items():
            if name in optimizer_options:
                raise TypeError(f"MondrianSampler sets the Optimizer's {name!r} itself ({why}).")
        # the mfbo initial design counts every trial; its first one is optuna's first trial
        n_initial = None if n_startup_trials is None else max(1, int(n_startup_trials))
        # check the optimizer's arguments now rather than at the second trial
        Optimizer({"x": Real(0.0, 1.0)}, surrogate=surrogate, n_initial=n_initial,
                  **optimizer_options).close()
        self._seed = _fresh_seed() if seed is None else int(seed)
        self._n_initial = n_initial
        self._surrogate = surrogate
        self._options = dict(optimizer_options)
        self._independent_sampler = independent_sampler or RandomSampler(seed=seed)
        self._warn_independent_sampling = bool(warn_independent_sampling)
        self._lock = threading.RLock()
        self._study_key = None
        self._search_space = ConditionalSearchSpace()
        self._mirror: _Mirror | None = None
        self._mirror_structure: tuple | None = None  # (structure, objectives, constraints)
        self._warned: set[str] = set()

    # pickling (e.g. to resume a study) keeps the settings; the optimizer is rebuilt from the
    # study's trials at the next relative sample
    def __getstate__(self):
        state = self.__dict__.copy()
        state.update(_lock=None, _mirror=None, _mirror_structure=None, _study_key=None,
                     _search_space=ConditionalSearchSpace())
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def reseed_rng(self) -> None:
        """A new seed for the optimizer (rebuilt from the study at the next relative sample)
        and for the independent sampler."""
        with self._lock:
            self._seed = _fresh_seed()
            self._mirror = None
        self._independent_sampler.reseed_rng()

    def _same_study(self, study) -> None:
        key = (id(study._storage), study._study_id)
        if key != self._study_key:
            self._study_key = key
            self._search_space = ConditionalSearchSpace()
            self._mirror = None
            self._warned = set()

    def infer_relative_search_space(self, study, trial: FrozenTrial
                                    ) -> dict[str, BaseDistribution]:
        with self._lock:
            self._same_study(study)
            # one read of the storage per trial, shared with sample_relative (as optuna's own
            # samplers do)
            structure = self._search_space.calculate(
                study._get_trials(deepcopy=False, use_cache=True))
        return dict(sorted(structure.distributions.items()))

    def sample_relative(self, study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        signs = loss_signs(study)
        search_space = {name: search_space[name] for name in sorted(search_space)
                        if not search_space[name].single()}
        if not search_space:
            return {}
        with self._lock:
            self._same_study(study)
            # the conditions inferred when the search space was (optuna may hand over less of
            # it, e.g. without parameters a PartialFixedSampler fixes)
            structure = self._search_space.structure.restricted(search_space)
            # every trial, unfiltered: sync looks only at the unsettled ones at the end
            trials = study._get_trials(deepcopy=False, use_cache=True)
            m = self._n_constraints(trials)
            key = (structure, len(signs), m)
            for _ in range(2):
                if self._mirror is None or self._mirror_structure != key:
                    self._mirror = _Mirror(structure, self._seed, self._n_initial,
                                           self._surrogate, self._options, len(signs), m)
                    self._mirror_structure = key
                if self._mirror.sync(trials, trial.number, signs):
                    break
                # a trial ran with other parameters than proposed: built again, the optimizer
                # is told every trial as it ran
                self._mirror = None
            params = self._mirror.propose(trial)
        if params:
            text = json.dumps(params)
            for i in range(0, len(text), _CHUNK):
                study._storage.set_trial_system_attr(trial._trial_id,
                                                     f"{PROPOSAL_KEY}:{i // _CHUNK}",
                                                     text[i:i + _CHUNK])
        return params

    def _n_constraints(self, trials) -> int:
        """How many constraints the study's trials have values for (by ``constraints_func``
        or ``trial.set_constraint``): those of the first trial that has them."""
        for t in trials:
            values = constraints_of(t)
            if values is not None:
                return len(values)
        return 0

    def sample_independent(self, study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        mirror = self._mirror
        if self._warn_independent_sampling and mirror is not None \
                and param_name not in mirror.codecs and param_name not in self._warned:
            why = self._search_space.why_independent(param_name, param_distribution)
            if why is not None:
                self._warned.add(param_name)
                _logger.warning(
                    f"The parameter {param_name!r} in trial {trial.number} is sampled by "
                    f"{type(self._independent_sampler).__name__}, not by MondrianSampler: "
                    f"{why}.  Pass warn_independent_sampling=False to MondrianSampler if this "
                    f"is intended.")
        return self._independent_sampler.sample_independent(study, trial, param_name,
                                                            param_distribution)

    def before_trial(self, study, trial: FrozenTrial) -> None:
        self._independent_sampler.before_trial(study, trial)

    def after_trial(self, study, trial: FrozenTrial, state: TrialState,
                    values) -> None:
        # the optimizer learns of the trial at the next relative sample (read from the
        # storage, where every process's trials are)
        if self._constraints_func is not None and state in (TrialState.COMPLETE,
                                                            TrialState.PRUNED):
            values_c = self._constraints_func(trial)
            if isinstance(values_c, (str, bytes)) or not hasattr(values_c, "__len__"):
                raise TypeError(f"constraints_func must return a sequence of numbers, got "
                                f"{values_c!r} for trial {trial.number}.")
            checked = []
            for c in values_c:
                if isinstance(c, bool) or not isinstance(c, (int, float, np.number)) \
                        or np.isnan(c):
                    raise ValueError(f"constraints_func returned {list(values_c)!r} for trial "
                                     f"{trial.number}: each value must be a number, not NaN.")
                checked.append(float(c))
            study._storage.set_trial_system_attr(trial._trial_id, CONSTRAINTS_KEY,
                                                 tuple(checked))
        self._independent_sampler.after_trial(study, trial, state, values)
