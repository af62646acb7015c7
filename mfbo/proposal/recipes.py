"""Proposal recipes: everything that makes a named surrogate propose points the way it does.

A :class:`Recipe` is frozen: the model factory and its options (the output transform among
them), the acquisition that scores points, the initial design, and the policy after it as an
ordered list of steps (:mod:`mfbo.proposal.steps`).  Each named surrogate has one
(:data:`RECIPES`); the :class:`~mfbo.Optimizer`'s arguments (``acquisition=``, ``n_initial=``,
``kappa=`` ...) make a copy with those settings replaced (:meth:`Recipe.with_options`).

Add a surrogate with :func:`register_surrogate`, either as a model factory (it gets the
default recipe) or as a whole recipe::

    register_surrogate("smac-50", get_recipe("rf-smac").with_step(RandomInterleave(0.5)))
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from .._core.arguments import check_int
from .models import BARTModel, EstimatorModel, Model, MondrianKernelModel, MondrianModel, \
    RandomModel, SMACForestModel, missing_method
from .scoring import Acquisition, check_finite_number, checked_kappa
from .steps import (AcquisitionSearch, BranchBandit, InitialDesign, LocalStep, ParzenStep,
                    PerDimension, PlateauEscape, RandomInterleave, StallEscape, Step)
from .steps.initial_design import check_kind
from .steps.search import NEIGHBOURHOODS, check_stopping_rule

__all__ = ["Recipe", "RECIPES", "get_recipe", "register_surrogate", "as_recipe"]


#: a recipe's mapping fields: read-only (a mappingproxy), pickled as dicts
_OPTIONS = ("model_options", "objectives_model_options")


@dataclass(frozen=True)
class Recipe:
    """How one surrogate proposes points: a model and the policy that uses it.

    Parameters
    ----------
    model : callable
        ``model(n_dims, random_state, **options)`` builds the :class:`~mfbo.proposal.models.Model`
        (usually a Model subclass).
    model_options : mapping, default={}
        Keyword arguments of ``model``; the optimizer's ``surrogate_options`` update them.
        The output transform lives here where the model takes one (the Mondrian forest's
        ``{"y_transform": "log"}``, SMAC's ``{"log_y": True}``).
    acquisition : Acquisition or str, default=Acquisition()
        How points are scored (a name: that acquisition with its default weights).
    initial_design : InitialDesign, default=InitialDesign()
        The first trials (Sobol points, ``10 * D`` of them by default).
    steps : sequence of Step, default=(RandomInterleave(0), AcquisitionSearch())
        The policy after the initial design, once the model is ready: the steps are asked in
        order and the first that proposes a point decides the trial (a random point if none
        does; a random point too while the model is not ready).
    name : str or None, default=None
        The surrogate's name, for messages (set by :func:`register_surrogate`; not compared).
    objectives_model : callable or None, default=None
        In a study of several objectives, the factory of each objective's model, called as
        ``model`` is (None: ``model``); constraints and studies of one objective keep
        ``model``.  E.g. :class:`~mfbo.proposal.models.MondrianKernelModel`.
    objectives_model_options : mapping, default={}
        Keyword arguments of ``objectives_model`` (the optimizer's ``surrogate_options`` go
        to ``model`` only).
    """

    model: Callable[..., Model]
    model_options: Mapping[str, Any] = field(default_factory=dict)
    acquisition: Acquisition = Acquisition()
    initial_design: InitialDesign = InitialDesign()
    steps: tuple[Step, ...] = (RandomInterleave(0.0), AcquisitionSearch())
    name: str | None = field(default=None, compare=False)
    objectives_model: Callable[..., Model] | None = None
    objectives_model_options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if not callable(self.model):
            raise TypeError(f"model must be callable (e.g. a Model subclass), got "
                            f"{self.model!r}.")
        if self.objectives_model is not None and not callable(self.objectives_model):
            raise TypeError(f"objectives_model must be callable or None, got "
                            f"{self.objectives_model!r}.")
        for name in _OPTIONS:
            value = getattr(self, name)
            if not isinstance(value, Mapping):
                raise TypeError(f"{name} must be a mapping, got {value!r}.")
            object.__setattr__(self, name, MappingProxyType(dict(value)))
        if isinstance(self.acquisition, str):
            object.__setattr__(self, "acquisition", Acquisition(self.acquisition))
        if not isinstance(self.acquisition, Acquisition):
            raise TypeError(f"acquisition must be an Acquisition or a name, got "
                            f"{self.acquisition!r}.")
        if not isinstance(self.initial_design, InitialDesign):
            raise TypeError(f"initial_design must be an InitialDesign, got "
                            f"{self.initial_design!r}.")
        if isinstance(self.steps, (str, bytes)) or not hasattr(self.steps, "__iter__"):
            raise TypeError(f"steps must be a sequence of steps, got {self.steps!r}.")
        steps = tuple(self.steps)
        for step in steps:
            if not isinstance(step, Step) or isinstance(step, InitialDesign):
                raise TypeError(f"steps must hold steps of mfbo.proposal.steps (the initial "
                                f"design is its own field), got {step!r}.")
        object.__setattr__(self, "steps", steps)

    def __getstate__(self):
        # a mappingproxy cannot be pickled: the options travel as dicts
        return {**self.__dict__, **{name: dict(getattr(self, name)) for name in _OPTIONS}}

    def __setstate__(self, state):
        # (a recipe pickled before objectives_model existed has none)
        state = {"objectives_model": None, "objectives_model_options": {}, **state}
        for name, value in state.items():
            object.__setattr__(self, name, MappingProxyType(dict(value)) if name in _OPTIONS
                               else value)

    # -- reading the policy ------------------------------------------------------------------
    def step(self, kind: type) -> Step | None:
        """The policy's step of type ``kind`` (the first), or None."""
        return next((s for s in self.steps if isinstance(s, kind)), None)

    @property
    def random_interleave(self) -> float:
        """The probability that a proposal is random by interleaving (0 without the step)."""
        step = self.step(RandomInterleave)
        return step.probability if step is not None else 0.0

    def initial_size(self, n_dims: int) -> int:
        """The initial design's size for a space of ``n_dims`` dimensions."""
        return self.initial_design.size_for(n_dims)

    # -- variations --------------------------------------------------------------------------
    def with_step(self, step: Step) -> "Recipe":
        """A copy with ``step`` in place of the step of its type, or, when there is none,
        inserted before the last step (the maximiser, as a rule)."""
        steps = list(self.steps)
        at = next((i for i, s in enumerate(steps) if type(s) is type(step)), None)
        if at is None:
            steps.insert(max(len(steps) - 1, 0), step)
        else:
            steps[at] = step
        return dataclasses.replace(self, steps=tuple(steps))

    def with_settings(self, kind: type, **settings) -> "Recipe":
        """A copy whose step of type ``kind`` has ``settings`` changed (its others kept), or a
        ``ValueError`` when the recipe has no such step."""
        old = self.step(kind)
        if old is None:
            raise ValueError(f"the recipe has no {kind.__name__} step to change; add one with "
                             f"with_step.")
        return self.with_step(dataclasses.replace(old, **settings))

    def without(self, kind: type) -> "Recipe":
        """A copy without the steps of type ``kind``."""
        return dataclasses.replace(self, steps=tuple(s for s in self.steps
                                                     if not isinstance(s, kind)))

    def with_options(self, acquisition=None, kappa=None, xi=None, initial_design=None,
                     n_initial=None, n_random_candidates=None, local_search=None,
                     neighbourhood=None) -> "Recipe":
        """A copy with the settings that the optimizer's arguments of these names give (None:
        the recipe's), each checked before anything is made.

        ``local_search`` is a bool (on or off) or a dict with any of ``"patience"``,
        ``"min_improvement"`` and ``"search_patience"`` (on, with those settings)."""
        if initial_design is not None:
            check_kind(initial_design)
        check_int(n_initial, "n_initial", or_none=True)
        check_int(n_random_candidates, "n_random_candidates", or_none=True)
        search: dict[str, Any] = {}
        if isinstance(local_search, Mapping):
            unknown = set(local_search) - {"patience", "min_improvement", "search_patience"}
            if unknown:
                raise ValueError(f"local_search has unknown key(s) {sorted(unknown)}; expected "
                                 f"'patience', 'min_improvement' and/or 'search_patience'.")
            check_stopping_rule(local_search.get("patience", 1),
                                local_search.get("min_improvement", 0.0),
                                local_search.get("search_patience", 0), "local_search")
            search.update(local_search=True, **local_search)
        elif isinstance(local_search, bool):
            search["local_search"] = local_search
        elif local_search is not None:
            raise TypeError(f"local_search must be a bool or a dict, got {local_search!r}.")
        if neighbourhood not in (None, *NEIGHBOURHOODS):
            raise ValueError(f"neighbourhood must be None, 'one-exchange' or 'joint', got "
                             f"{neighbourhood!r}.")
        if kappa is not None:
            kappa = checked_kappa(kappa)
        if xi is not None:
            check_finite_number("xi", xi, "a number")
        if n_random_candidates is not None:
            search["n_random"] = int(n_random_candidates)
        if neighbourhood is not None:
            search["neighbourhood"] = neighbourhood
        scoring = {k: v for k, v in {"name": acquisition, "kappa": kappa,
                                     "xi": None if xi is None else float(xi)}.items()
                   if v is not None}
        design = {k: v for k, v in {"kind": initial_design, "size": None if n_initial is None
                                    else int(n_initial)}.items() if v is not None}
        recipe = self
        if scoring:
            recipe = dataclasses.replace(recipe, acquisition=dataclasses.replace(
                recipe.acquisition, **scoring))
        if design:
            recipe = dataclasses.replace(recipe, initial_design=dataclasses.replace(
                recipe.initial_design, **design))
        if search:
            if recipe.step(AcquisitionSearch) is None:
                raise ValueError(f"n_random_candidates, local_search and neighbourhood set the "
                                 f"recipe's AcquisitionSearch step, and {recipe!r} has none.")
            recipe = recipe.with_settings(AcquisitionSearch, **search)
        return recipe

    def build_model(self, n_dims: int, random_state, options: Mapping | None = None,
                    objective: bool = False) -> Model:
        """``model(n_dims, random_state, **model_options, **options)``; a ``TypeError`` of
        the factory names the surrogate.  With ``objective`` (an objective of a study of
        several objectives) and an ``objectives_model``, that factory with
        ``objectives_model_options`` instead (``options`` are not passed).

        The model carries the recipe's interleaving probability as its attribute
        ``random_interleave``, for callers that tell model-based proposals from random ones
        by looking at the model; the proposal policy itself reads the recipe."""
        factory, settings = self.model, {**self.model_options, **(options or {})}
        argument = "surrogate_options"
        if objective and self.objectives_model is not None:
            factory, settings = self.objectives_model, dict(self.objectives_model_options)
            argument = "objectives_model_options"
        try:
            model = factory(n_dims, random_state, **settings)
        except TypeError as exc:
            name = self.name or getattr(factory, "__name__", repr(factory))
            raise TypeError(f"{argument} for {name!r}: {exc}") from None
        try:
            model.random_interleave = self.random_interleave
        except AttributeError:  # a model with __slots__ or a read-only attribute
            pass
        return model


class _EstimatorFactory:
    """Model factory of an estimator object: every model wraps a fresh deep copy of it."""

    def __init__(self, estimator):
        self.estimator = estimator

    def __call__(self, n_dims: int, random_state, **options) -> Model:
        if options:
            raise ValueError("surrogate_options only apply to a named surrogate.")
        return EstimatorModel(copy.deepcopy(self.estimator))

    def __repr__(self):
        return f"EstimatorModel({self.estimator!r})"


_RECIPES: dict[str, Recipe] = {
    # the papers' online Mondrian forest under UCB (kappa 1), with the steps that make it a
    # tuner: each choice and the measurements behind it are in benchmarks/DEFAULTS.md,
    # "The mondrian recipe, choice by choice"
    "mondrian": Recipe(
        model=MondrianModel,
        model_options={"y_transform": "log", "posterior": "alternating",
                       "trend": "if-integers", "trend_window": 10, "robust_shift": True},
        acquisition=Acquisition("ucb", kappa=1.0),
        initial_design=InitialDesign("sobol", PerDimension(5)),
        steps=(RandomInterleave(0.0),
               PlateauEscape(every=3, exclude=True, slices=True, reach=1.0),
               StallEscape(window=4, move="exchange", integers=False, novel=True,
                           max_escapes=1, conditional=False),
               BranchBandit(alpha=0.5, move="parzen", patience=6),
               LocalStep(every=3, linear=True, isotropic="if-curved"),
               ParzenStep(every=2, n_candidates=200, when_converged=True),
               AcquisitionSearch(n_random=2_000, patience=3, min_improvement=1e-3,
                                 neighbourhood="joint", joint_move_dims=6))),
    # SMAC3 2.4's HPO facade: log-scaled losses, log-normal EI, 20 % random interleaving,
    # 10 D initial points, 10,000 random points, local search for 10 rounds of any gain
    "rf-smac": Recipe(
        model=SMACForestModel, model_options={"log_y": True},
        acquisition=Acquisition("lognormal-ei"),
        initial_design=InitialDesign("sobol", PerDimension(10)),
        steps=(RandomInterleave(0.2), AcquisitionSearch(n_random=10_000))),
    "random": Recipe(model=RandomModel, steps=(RandomInterleave(1.0), AcquisitionSearch())),
    # BART with particle Gibbs, refitted on every tell (mfbo.proposal.models.BARTModel), under
    # UCB (kappa 1) and 10 D Sobol points; fewer random points than the default because
    # every prediction sums 50 trees over 100 posterior draws
    "bart": Recipe(model=BARTModel, steps=(RandomInterleave(0.0),
                                           AcquisitionSearch(n_random=2_000))),
}
# the mondrian recipe's policy with the Mondrian kernel's Gaussian process as the model of
# every outcome, one objective's too
_RECIPES["mondrian-kernel"] = dataclasses.replace(
    _RECIPES["mondrian"], model=MondrianKernelModel, model_options={}, objectives_model=None)
_RECIPES = {name: dataclasses.replace(recipe, name=name) for name, recipe in _RECIPES.items()}
_BUILT_IN = frozenset(_RECIPES)
#: the named surrogates' recipes (read-only; add one with :func:`register_surrogate`)
RECIPES = MappingProxyType(_RECIPES)


def get_recipe(name: str) -> Recipe:
    """The recipe of the named surrogate ``name`` (case-insensitive)."""
    if not isinstance(name, str) or name.lower() not in RECIPES:
        raise ValueError(f"name must be one of {sorted(RECIPES)}, got {name!r}.")
    return RECIPES[name.lower()]


def register_surrogate(name: str, factory: Callable[..., Model] | Recipe) -> None:
    """Make ``Optimizer(surrogate=name)`` use ``factory``: a :class:`Recipe`, or a model
    factory ``factory(n_dims, random_state, **options)`` (usually a :class:`Model` subclass;
    ``options`` are the optimizer's ``surrogate_options``), which gets the default
    ``Recipe(model=factory)``.  Names are case-insensitive; the built-in ones cannot be
    replaced."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}.")
    key = name.lower()
    if key in _BUILT_IN:
        raise ValueError(f"{name!r} is a built-in surrogate and cannot be replaced.")
    if isinstance(factory, Recipe):
        recipe = dataclasses.replace(factory, name=key)
    elif callable(factory):
        recipe = Recipe(model=factory, name=key)
    else:
        raise TypeError(f"factory must be callable (e.g. a Model subclass) or a Recipe, got "
                        f"{factory!r}.")
    _RECIPES[key] = recipe


def as_recipe(surrogate) -> Recipe:
    """The recipe of ``surrogate``: a registered name (case-insensitive), a :class:`Recipe`,
    or an estimator object with ``fit`` and ``predict(X, return_std=True)`` (the default
    recipe around it)."""
    if isinstance(surrogate, Recipe):
        return surrogate
    if isinstance(surrogate, str):
        if surrogate.lower() not in RECIPES:
            raise ValueError(f"surrogate must be one of {sorted(RECIPES)} or an estimator "
                             f"object, got {surrogate!r}.")
        return RECIPES[surrogate.lower()]
    missing = missing_method(surrogate)
    if missing:
        raise TypeError(f"surrogate must be a name in {sorted(RECIPES)} or an object with fit "
                        f"and predict(X, return_std=True); {surrogate!r} has no {missing}.")
    return Recipe(model=_EstimatorFactory(surrogate))
