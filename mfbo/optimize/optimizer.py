"""The ask/tell optimizer: one study, one surrogate updated online after every tell.

The optimizer's state is a replay of its journal (:mod:`mfbo.study`, :mod:`mfbo.storage`): an
``ask`` appends a pending trial, a ``tell`` finishes it, and every method first reads the events
that other processes appended, so several processes sharing a storage file share one study.
A running trial may report intermediate values (:meth:`Optimizer.report`) and ask whether
to stop (:meth:`Optimizer.should_prune`, answered by the optimizer's pruner,
:mod:`mfbo.pruners`); a trial stopped early is told ``state="pruned"``.
Where the next trial goes is the proposal policy's business (:mod:`mfbo.proposal`), which
follows the surrogate's recipe (:mod:`mfbo.proposal.recipes`); configurations the user enqueued go
before it.  The policy always minimises a loss: with ``direction="maximize"`` the study hands
it the negated values, and everything the user sees stays in the values' own units.
"""

from __future__ import annotations

import copy
import functools
import threading
import warnings
from typing import Mapping

from ..space.candidates import make_candidates
from .._core.arguments import check_int
from ..study.ownership import HOST, owner_host
from ..proposal.models import Model
from .._core.seeds import seed_sequence
from ..proposal.proposer import Proposer
from ..proposal.recipes import Recipe, as_recipe
from .pruners import Pruner, as_pruner
from ..proposal.steps import AcquisitionSearch
from ..space import Space, as_space
from ..storage import Storage
from ..study.objectives import Objectives
from ..study.pruned import ON_PRUNED
from ..study.study import ON_FAILURE, Rows, Study
from ..study.trial import Trial, TrialPruned, extra_fields, finite, public, shorten
from ..proposal.steps.outcomes import METHODS, checked_outcome_options

__all__ = ["Trial", "Optimizer", "StudyExhausted"]


def _serialised(method):
    """``method`` run under the optimizer's lock: one thread at a time reads or changes the
    study and the surrogate."""
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return locked


class StudyExhausted(RuntimeError):
    """Raised by :meth:`Optimizer.ask` when nothing is left to propose: every candidate has
    been evaluated or is pending, or (with ``min_distance``) no point far enough from them
    was found; the message says which."""


class Optimizer:
    """Ask/tell Bayesian optimization with an online surrogate.

    A thin facade over a :class:`~mfbo.study.Study` (the trials, replayed from the storage's
    journal: :attr:`study`) and a :class:`~mfbo.proposal.Proposer` (the proposal policy under
    the surrogate's :class:`~mfbo.proposal.recipes.Recipe`: :attr:`proposer`, :attr:`recipe`).

    Parameters
    ----------
    space : dict or Space
        ``name -> Real/Integer/Categorical``; ``(low, high)`` is a :class:`~mfbo.Real`.
    direction : {"minimize", "maximize"}, default="minimize"
        Whether the values told are minimised (losses) or maximised (scores, accuracies).
        Trials, :attr:`best_trial` and :meth:`result` keep the values as told; the surrogate
        models the negated values when maximising.  The direction is recorded with the study:
        reopening a stored study with the other direction is refused.
    surrogate : {"mondrian", "rf-smac", "random"}, Recipe or estimator, default="mondrian"
        ``"mondrian"``: the online Mondrian regression forest (10 trees, min_samples_split 2,
        the empirical and the BP posterior in turn; each tell is one ``partial_fit``).
        ``"rf-smac"``: SMAC3 2.4's HPO-facade random forest (log-scaled losses, log-EI, 20 %
        random interleaving, refit every 8 observations; ``surrogate_options={"retrain_after":
        1}`` refits every time).
        ``"random"``: random search.  Each name stands for a :class:`~mfbo.proposal.recipes.Recipe`
        (:data:`mfbo.proposal.recipes.RECIPES`), and a Recipe can be given directly.  Any object with
        ``fit`` and ``predict(X, return_std=True)`` (optionally ``partial_fit``,
        ``predict_per_tree``) is used on unit-cube inputs under the default recipe.
        The arguments below that default to None take the recipe's value when None.
    acquisition : {"ucb", "ei", "logei", "pi", "thompson", "lognormal-ei"} or None
        ``None``: the recipe's (``"ucb"``, i.e. mean - kappa * std of the loss, for
        the Mondrian forest as in the papers; ``"lognormal-ei"`` for ``"rf-smac"``).
    candidates : array-like, DataFrame or list of dicts, optional
        A finite set of configurations (columns/keys = the space's names).  The acquisition is
        then maximised by exact enumeration over the rows not yet evaluated or pending, and a
        row is never proposed twice.  Fully discrete spaces with at most 100,000 points are
        enumerated this way automatically.
    random_state : int or None
        Seeds the initial design, the surrogate and every proposal (proposal ``i`` uses its own
        stream, so a study is reproducible and parallel processes do not collide).
    n_initial : int or None
        Size of the initial design; ``None``: the recipe's (``5 * D`` for the Mondrian forest,
        ``10 * D`` as SMAC3 otherwise; :func:`mfbo.minimize` caps it at a quarter of
        ``n_calls`` like SMAC3).
    initial_design : {"sobol", "random", "lhs"} or None, default=None
        Kind of initial design (None: the recipe's, ``"sobol"`` for the built-in ones); with
        ``candidates`` the available row nearest to each design point is taken.
    kappa : float, tuple of float or None
        UCB's exploration weight; a tuple is a cycle (the proposal from ``n`` observations
        uses ``kappa[n % len(kappa)]``); None: the recipe's (1, the papers', for the
        built-in ones).
    xi : float or None
        Exploration weight of EI/PI; None: the recipe's (0 for the built-in ones).
    batch_strategy : {"constant_liar", "thompson"}, default="constant_liar"
        How pending trials are accounted for when more are asked before they are told:
        ``"constant_liar"`` lets a copy of the surrogate believe each pending point has the
        loss given by ``liar`` (``"min"``, ``"mean"`` or ``"max"`` of the observed losses);
        ``"thompson"`` gives each proposal its own draw (one tree of the forest).
    on_failure : {"auto", "worst", "ignore", "infeasible"}, default="auto"
        What the surrogate sees for a failed trial: the worst loss observed so far (so the
        region is avoided, like SMAC's crash cost), nothing, or (``"infeasible"``) a
        failure: one more forest, on the same partitions, models whether a trial fails, and
        the probability of not failing weighs every proposal as a constraint's does, while
        the other models see a failed point as the nearest complete trial (so a crash near
        the best region does not read as a bad loss there, nor as a violation of every
        constraint).  A study of one value then proposes by expected improvement times that
        probability (:class:`~mfbo.proposal.steps.OutcomeSearch`) instead of its recipe's
        steps.  ``"auto"``: ``"infeasible"`` for a study with constraints, several objectives
        or named ones, ``"worst"`` for a study of one unnamed value without constraints (whose
        proposals stay its recipe's).  A handle's
        setting, not recorded with the study (:attr:`on_failure` is the one in use).
    on_pruned : {"worst", "shift", "rank"}, default="worst"
        What the surrogate sees for a pruned trial of a study of one value: the worst loss so
        far (at least its last reported loss), or its last reported loss carried to the
        full-budget scale by the complete trials that reported the same step (``"shift"``:
        plus their median change from that step to the end; ``"rank"``: through their
        quantile map; :mod:`mfbo.study.pruned`).  With successive halving, ``"shift"`` lets
        the forest learn from every trial the pruner stopped instead of the few that
        finished.  A handle's setting, not recorded with the study, as ``on_failure``.
    n_random_candidates : int or None, default=None
        Random/Sobol points scored per proposal in continuous or mixed spaces before local
        search.  None: the recipe's (SMAC3's 10,000 for RF-SMAC; 2,000 for the Mondrian
        forest, whose local searches also stop once their gains are negligible).
    local_search : None, bool or dict, default=None
        Refine the best random points by local search (None: the recipe's choice, on for the
        built-in ones).  A dict turns it on with this stopping rule:
        ``{"patience": k, "min_improvement": r}`` stops a search after ``k`` rounds whose gain
        is at most ``r`` times the random points' score spread, and ``"search_patience": m``
        stops all of them once the best score found has gained no more in ``m`` rounds in a
        row (0: never); missing keys take the recipe's values (RF-SMAC: SMAC3's 10 rounds,
        any gain, no overall limit; Mondrian: 3 rounds, 1e-3).
    surrogate_options : dict, optional
        Keyword arguments for a named surrogate's model, over its recipe's ``model_options``
        (e.g. ``{"posterior": "bp"}``, ``{"n_estimators": 20}``, ``{"retrain_after": 1}``).
        With several objectives and a recipe whose ``objectives_model`` is set, the
        objectives' models take that recipe's ``objectives_model_options`` instead.
    storage : None, path or Storage
        ``None``: in memory.  A path such as ``"study.db"`` (or ``"sqlite:///study.db"``): a
        durable SQLite journal; opening an existing study resumes it (finished trials are
        replayed into the surrogate, pending trials whose process died are asked again,
        enqueued configurations not yet asked are still queued).
    study_name : str, default="default"
        Several studies can share one storage file.
    min_distance : float, default=0
        In continuous and mixed spaces, skip proposals closer than this (max-norm in the unit
        cube) to an evaluated or pending point.  Exact repeats are always excluded.
    neighbourhood : {None, "one-exchange", "joint"}, default=None
        Local-search moves in continuous coordinates: SMAC's one coordinate at a time, or all
        continuous coordinates together (Gaussian steps).  None: the recipe's
        (``"joint"`` for the Mondrian forest, whose axis-aligned cells otherwise make the search
        crawl along one axis at a time; ``"one-exchange"`` for RF-SMAC, as in SMAC3).
    directions : list or dict, optional
        Several objectives (in place of ``direction``): ``["minimize", "maximize"]`` (the
        objective returns a tuple of values, or a dict whose ``"loss"`` key holds it), or
        ``{"error": "minimize", "latency": "minimize"}`` (named: the objective returns a dict
        with those keys).  Trials keep every value (:attr:`Trial.values`); there is no single
        best trial, but a Pareto front (:attr:`best_trials`); proposals follow
        ``pareto_method``.  Recorded with the study like ``direction``.
    constraints : list of str or dict, optional
        Names of values the objective returns in its dict that must be ``<= 0`` for a trial
        to be *feasible*; only feasible trials are the best (or on the front).  Or a dict
        ``{name: function}``: each function is called with what the objective returned (a
        dict, a tuple or a number) when the trial is told, and gives the constraint's value
        (``{"mem_limit": lambda r: r["mem"] - 16}``); the study records the values, so a
        resumed study never calls them on its old trials.  A function that raises makes the
        return refused, as a missing key does.  (A single function is refused: the number of
        constraints must be known before the first trial.)  Each is
        modelled by a forest of its own on the same partitions, and proposals are weighted by
        the probability that every constraint is met.  A failed trial counts as violating
        them (with ``on_failure="infeasible"``, the default here, as a failure; with
        ``"worst"``, as the largest violation so far).
    pareto_method : {"auto", "hvi", "parego"}, default="auto"
        With several objectives: the expected hypervolume improvement over the trees' joint
        draws (``"hvi"``; ``"auto"`` takes it for two objectives) or random Chebyshev
        scalarisations of the objectives' lower confidence bounds (``"parego"``; ``"auto"``
        for three or more); :class:`~mfbo.proposal.steps.OutcomeSearch`.
    outcome_options : dict, optional
        Further settings of that :class:`~mfbo.proposal.steps.OutcomeSearch`, which proposes
        in a study of several objectives or with constraints (ignored otherwise), e.g.
        ``{"min_feasibility": 0.5}`` (rank first the points that meet the constraints with
        probability at least 0.5) or ``{"feasibility": "trees"}``; each key is one of its
        parameters but ``method`` (``pareto_method``), refused before anything is made if it
        is no setting or its value is out of range.
    pruner : Pruner or None, default=None
        The rule :meth:`should_prune` applies to the values a trial reported
        (:class:`~mfbo.pruners.MedianPruner`, :class:`~mfbo.pruners.SuccessiveHalvingPruner`,
        ...; :mod:`mfbo.pruners`).  None: :class:`~mfbo.pruners.NopPruner`, which never
        prunes.  What a pruned trial feeds the surrogate: see :attr:`mfbo.Study.obs`.
    """

    def __init__(self, space, surrogate="mondrian", acquisition=None, candidates=None,
                 random_state=None, n_initial=None, initial_design=None, kappa=None, xi=None,
                 batch_strategy="constant_liar", liar="min", on_failure="auto",
                 n_random_candidates=None, local_search=None, surrogate_options=None,
                 storage=None, study_name="default", min_distance=0.0,
                 neighbourhood=None, direction="minimize", pruner=None, directions=None,
                 constraints=None, pareto_method="auto", on_pruned="worst",
                 outcome_options=None):
        self._lock = threading.RLock()
        objectives = Objectives.make(direction, directions, constraints)
        if pareto_method not in METHODS:
            raise ValueError(f"pareto_method must be one of {list(METHODS)}, got "
                             f"{pareto_method!r}.")
        outcome_options = checked_outcome_options(outcome_options)
        self.pruner: Pruner = as_pruner(pruner)
        space = as_space(space)
        recipe = as_recipe(surrogate).with_options(
            acquisition=acquisition, kappa=kappa, xi=xi, initial_design=initial_design,
            n_initial=n_initial, n_random_candidates=n_random_candidates,
            local_search=local_search, neighbourhood=neighbourhood)
        ss = seed_sequence(random_state)
        seed = ss.spawn(1)[0]
        if on_failure not in ("auto", *ON_FAILURE):
            raise ValueError(f"on_failure must be one of {['auto', *ON_FAILURE]}, got "
                             f"{on_failure!r}.")
        if on_pruned not in ON_PRUNED:
            raise ValueError(f"on_pruned must be one of {list(ON_PRUNED)}, got {on_pruned!r}.")
        if on_failure == "auto":
            on_failure = "worst" if objectives.plain else "infeasible"
        failures = on_failure == "infeasible"
        outputs = None if objectives.plain and not failures else _outcome_models(
            recipe, len(space), seed, surrogate_options, objectives, failures)
        model = recipe.build_model(len(space), seed, surrogate_options,
                                   objective=objectives.k > 1)
        cands = make_candidates(space, candidates)
        self.proposer = Proposer(space, recipe, model, ss.entropy, cands, batch_strategy, liar,
                                 min_distance, outputs, pareto_method, outcome_options)
        self.study = Study(space, storage, study_name, cands, on_failure, config={
            "surrogate": surrogate if isinstance(surrogate, str) else repr(surrogate)},
            objectives=objectives, on_pruned=on_pruned)
        before = self.study.config.get("surrogate")
        if isinstance(surrogate, str) and isinstance(before, str) and before != surrogate:
            warnings.warn(f"study {study_name!r} was run with surrogate={before!r}; it goes on "
                          f"with surrogate={surrogate!r}.", UserWarning, stacklevel=2)
        self.refresh()
        # a pending trial without an owner is an orphan of this host's, not another host's;
        # one whose owner beats is asked again when its heartbeat stops
        beating = self.study.storage.heartbeats(study_name) if self.study.pending else {}
        elsewhere = [t for t in self.study.pending
                     if owner_host(t.owner) not in (None, HOST) and t.owner not in beating]
        if elsewhere:
            hosts = sorted({owner_host(t.owner) for t in elsewhere})
            warnings.warn(f"study {study_name!r} has {len(elsewhere)} pending trial(s) asked on "
                          f"other hosts ({', '.join(hosts)}); they are taken to be still running "
                          f"and are not asked again.", UserWarning, stacklevel=2)

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.RLock()

    # -- the parts and their settings ------------------------------------------------------------
    @property
    def space(self) -> Space:
        return self.study.space

    @property
    def storage(self) -> Storage:
        return self.study.storage

    @property
    def study_name(self) -> str:
        return self.study.study_name

    @property
    def owner(self) -> str:
        return self.study.owner

    @property
    def on_failure(self) -> str:
        return self.study.on_failure

    @property
    def on_pruned(self) -> str:
        """What the surrogate sees for a pruned trial (the ``on_pruned`` parameter)."""
        return self.study.on_pruned

    @property
    def direction(self) -> str | None:
        """``"minimize"`` or ``"maximize"``: what is done with the values told (None with
        several objectives: :attr:`directions`)."""
        return self.study.direction

    @property
    def directions(self) -> tuple[str, ...]:
        """Each objective's direction."""
        return self.study.objectives.directions

    @property
    def objectives(self) -> Objectives:
        """The study's objectives and constraints."""
        return self.study.objectives

    @property
    def recipe(self) -> Recipe:
        """The recipe in use: the surrogate's, with the fields the arguments set."""
        return self.proposer.recipe

    @property
    def model(self) -> Model:
        return self.proposer.model

    @property
    def acquisition(self):
        return self.proposer.acquisition

    @property
    def n_initial(self) -> int:
        return self.proposer.n_initial

    @property
    def n_random_candidates(self) -> int | None:
        search = self.recipe.step(AcquisitionSearch)
        return None if search is None else search.n_random

    @property
    def initial_design(self) -> str:
        return self.recipe.initial_design.kind

    @property
    def local_search(self) -> bool:
        search = self.recipe.step(AcquisitionSearch)
        return search is not None and search.local_search

    @property
    def batch_strategy(self) -> str:
        return self.proposer.batch_strategy

    @property
    def liar(self) -> str:
        return self.proposer.liar

    @property
    def min_distance(self) -> float:
        return self.proposer.min_distance

    @property
    def _obs(self) -> Rows:
        return self.study.obs

    @property
    def _asked(self) -> Rows:
        return self.study.asked

    # -- public state -------------------------------------------------------------------------
    @property
    @_serialised
    def trials(self) -> list[Trial]:
        """Every trial, in id order (the study's own objects, in a new list)."""
        return list(self.study.trials)

    @property
    def n_trials(self) -> int:
        return self.study.n_trials

    @property
    def n_finished(self) -> int:
        return self.study.n_finished

    @property
    def n_pruned(self) -> int:
        return self.study.n_pruned

    @property
    @_serialised
    def pending(self) -> list[Trial]:
        """Copies of the trials asked and not yet told, in the order they were asked."""
        return self.study.copies(self.study.pending)

    @property
    @_serialised
    def best_trial(self) -> Trial | None:
        """A copy of the complete trial with the best value: the smallest, or the largest with
        ``direction="maximize"`` (the first of ties); with constraints the best feasible one.
        With several objectives there is none: :attr:`best_trials`."""
        if self.study.objectives.multi:
            raise ValueError("a study of several objectives has no single best trial; "
                             "best_trials holds its Pareto front.")
        best = self.study.best
        return None if best is None else public(best)

    @property
    @_serialised
    def best_trials(self) -> list[Trial]:
        """Copies of the complete (feasible) trials no other such trial dominates: the
        Pareto front of the objectives (with one objective, the best trial), in id order."""
        from ..study.pareto import pareto_trials

        self.study.refresh()
        return self.study.copies(pareto_trials(self.study.trials, self.study.objectives))

    @property
    @_serialised
    def queued(self) -> list[dict]:
        """The configurations enqueued and not yet asked, in the order :meth:`ask` hands them
        out (copies)."""
        self.refresh()
        return self.study.queued

    @_serialised
    def refresh(self) -> None:
        """Read what other processes appended to the journal."""
        self.study.refresh()
        self.proposer.observe(self.study)

    # -- enqueue ------------------------------------------------------------------------------
    @_serialised
    def enqueue(self, params, *, skip_existing: bool = False) -> int:
        """Evaluate these configurations first: :meth:`ask` hands them out, in order, before
        any proposal of the surrogate.

        ``params`` is a params dict, a list of them or a DataFrame with one row per
        configuration and a column per parameter, each a complete configuration (a value
        for every parameter of the space: partial ones are refused, since the initial design
        has no notion of completing them).  Every configuration is checked against the space
        first: a bad one raises a ``TypeError``/``ValueError`` naming its position and the
        parameter, and nothing is queued.  With a storage the queue is durable: a configuration
        enqueued and not yet asked is still queued when the study is reopened, in any process.
        Enqueued trials are trials like the others: they count towards the initial design
        (``n_initial`` trials in all come before the surrogate proposes) and towards
        ``n_calls``/``max_trials``.  With a candidate set, a configuration outside it is
        evaluated as well (as :meth:`tell` with a params dict records one).

        ``skip_existing`` leaves out configurations already asked (evaluated, failed or
        pending) or queued, so enqueuing the same list again when a study is resumed does not
        evaluate them twice.  Returns the number of configurations queued.
        """
        return self.study.enqueue(params, skip_existing=bool(skip_existing))

    # -- ask ----------------------------------------------------------------------------------
    @_serialised
    def ask(self, n: int | None = None, max_trials: int | None = None):
        """Propose one trial (``n=None``) or a list of ``n`` trials for parallel workers.

        The trials come from, in this order: pending trials whose process died (asked again),
        the configurations enqueued (:meth:`enqueue`), the surrogate's proposals.  Pending
        trials (asked, not yet told, by this or another process) are accounted for by
        ``batch_strategy``.  With ``max_trials`` no trial is created once the study holds that
        many (finished or pending); fewer, possibly none, are returned (a pending trial of a
        dead owner is still handed out: it creates none).
        Raises :class:`StudyExhausted` when a finite candidate set is used up, or when
        ``min_distance`` leaves no point to propose.
        """
        single = n is None
        check_int(n, "n", or_none=True)
        check_int(max_trials, "max_trials", minimum=0, or_none=True)
        study = self.study

        def make() -> list[Trial]:
            self.proposer.observe(study)
            count = 1 if single else int(n)
            # a trial taken from a dead owner is no new trial: max_trials does not limit it
            made: list[Trial] = study.reclaim(count)
            if max_trials is not None:
                count = len(made) + min(count - len(made),
                                        max(0, int(max_trials) - study.n_trials))
            made.extend(study.take_queued(count - len(made)))
            lied = None
            while len(made) < count:
                proposal, lied = self.proposer.propose(study, lied)
                if proposal is None:
                    break
                made.append(study.add(*proposal))
            return made

        out = study.copies(study.atomic(make))
        if single:
            if not out:
                if max_trials is not None and study.n_trials >= max_trials:
                    return None
                raise StudyExhausted(self._exhausted())
            return out[0]
        if not out and max_trials is None:
            raise StudyExhausted(self._exhausted())
        return out

    def _exhausted(self) -> str:
        return self.proposer.last_exhaustion_reason or \
            "every candidate has been evaluated or is pending."

    # -- intermediate values and pruning ------------------------------------------------------
    @_serialised
    def report(self, trial, step: int, value: float) -> None:
        """Record the value ``trial`` (a pending :class:`Trial` or its id) measured at
        ``step`` (a non-negative integer: an epoch, a boosting round, a fold...), in the
        values' own units (a loss, or a score with ``direction="maximize"``).

        The report is durable (a journal event: every process sharing the study sees it, and
        a resumed study has it) and is kept in :attr:`Trial.intermediate_values`.  As in
        Optuna, a step reported already keeps its first value (a ``UserWarning`` says so).
        ``value`` must be finite; a trial told already is refused (:class:`TrialFinished`).
        Bad input raises before anything is recorded.
        """
        self.study.report(trial, step, value)

    @_serialised
    def should_prune(self, trial) -> bool:
        """Whether the pending ``trial`` (a :class:`Trial` or its id) should stop now, by the
        optimizer's ``pruner`` applied to the values it and the other trials reported
        (read from the journal, so trials of other processes count).  The caller stops it
        by telling it ``state="pruned"`` (or by raising :class:`~mfbo.TrialPruned` in an
        objective of :func:`~mfbo.minimize`)."""
        study = self.study

        def decide() -> bool:
            return bool(self.pruner.prune(study, study.pending_trial(trial)))

        if self.pruner.records:  # its record and its decision: one step for every process
            return study.atomic(decide)
        study.refresh()
        return decide()

    # -- tell ---------------------------------------------------------------------------------
    @_serialised
    def tell(self, trial, value=None, *, state: str | None = None, error: str | None = None,
             start: float | None = None, end: float | None = None,
             worker: str | None = None) -> Trial:
        """Report the outcome of a trial.

        ``trial`` is a :class:`Trial` or its id (from :meth:`ask`), or a parameter dict for a
        configuration evaluated outside the optimizer (it is recorded as a new trial).
        ``value`` is the objective's value (a loss, or a score to maximise with
        ``direction="maximize"``): a float, or a dict whose ``"loss"`` key holds it and whose
        other keys are extra fields.  An exception, ``None``, NaN or inf (or ``error=...``)
        records a failed trial.  ``state="pruned"`` (with no value, or a dict of extra fields
        without ``"loss"``), or a :class:`~mfbo.TrialPruned` exception as ``value``, records a
        trial stopped early: it keeps its reported values, is never the best, and is fed to
        the surrogate as :attr:`mfbo.Study.obs` says.  ``state`` may also be ``"complete"``
        or ``"failed"``,
        which must agree with ``value`` (None: taken from ``value``).
        Bad input raises before anything is recorded.
        """
        if state not in (None, "complete", "failed", "pruned"):
            raise ValueError(f"state must be None, 'complete', 'failed' or 'pruned', got "
                             f"{state!r}.")
        if state == "pruned" or isinstance(value, TrialPruned):
            fields = isinstance(value, Mapping) and "loss" not in value
            if state not in (None, "pruned") or error is not None or not (
                    value is None or isinstance(value, TrialPruned) or fields):
                raise ValueError(f"a pruned trial is told without a value or an error (its "
                                 f"values are those it reported), got value="
                                 f"{shorten(repr(value), 80)}, state={state!r}, "
                                 f"error={error!r}.")
            state, loss, err = "pruned", None, None
            values = cons = None
            extra = extra_fields(value) if fields else {}
        else:
            parsed, values, cons, extra, err = self.study.objectives.parse(value)
            loss = None if values is None or self.study.objectives.multi else values[0]
            if error is not None:
                parsed, loss, values, cons, err = "failed", None, None, None, str(error)
            if state == "failed" and parsed == "complete":
                raise ValueError(f"state='failed' is told without a value (or with an "
                                 f"error), got value={value!r}.")
            if state == "failed" and value is None and error is None:
                err = "told failed"
            elif state == "complete" and parsed != "complete":
                raise ValueError(f"state='complete' needs a finite value, got {value!r}.")
            state = parsed
        for name, v in (("start", start), ("end", end)):
            if v is not None:
                finite(v, f"{name} (a time stamp)")
        if worker is not None and not isinstance(worker, str):
            raise TypeError(f"worker must be a string, got {worker!r}.")
        told = self.study.tell(trial, state, loss, extra, err, start, end, worker,
                               values, cons)
        self.proposer.observe(self.study)
        return public(told)

    # -- results ------------------------------------------------------------------------------
    @_serialised
    def result(self):
        """A :class:`~mfbo.results.OptimizeResult` of the trials so far."""
        from ..results.result import OptimizeResult

        self.study.refresh()
        return OptimizeResult(self.space, self.study.copies(self.study.trials),
                              objectives=self.study.objectives)

    @_serialised
    def close(self) -> None:
        self.study.close()


def _outcome_models(recipe: Recipe, n_dims: int, seed, options, objectives: Objectives,
                    failures: bool = False) -> list:
    """The models of a study's outcomes after its first objective (the other objectives',
    then the constraints', then with ``failures`` whether a trial failed, modelled as a
    constraint), each built like the first from a copy of its seed (so that
    Mondrian forests share their partitions); a constraint's model predicts its raw value
    (a Mondrian forest's or SMAC's without their output transform), whose threshold is 0;
    a Mondrian forest's with the linear trend (its leaves hold what a ridge regression
    leaves), since a constraint is often close to linear (a memory or a time budget) and the
    trend carries its slope beyond the data, where a forest's mean is flat.  With several
    objectives, the objectives' models are the recipe's ``objectives_model`` where it has
    one."""
    from ..proposal.models import MondrianKernelModel, MondrianModel, SMACForestModel

    raw = {MondrianModel: {"y_transform": "raw", "repeat_y_transform": None, "trend": True,
                           "trend_window": None},
           MondrianKernelModel: {"y_transform": "raw"},
           SMACForestModel: {"log_y": False}}.get(recipe.model, {})
    models = []
    for j in range(1, objectives.k + objectives.m + failures):
        extra = raw if j >= objectives.k else {}
        models.append(recipe.build_model(n_dims, copy.deepcopy(seed),
                                         {**(options or {}), **extra},
                                         objective=j < objectives.k))
    return models
