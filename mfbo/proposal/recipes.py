"""Proposal recipes: everything that makes a named surrogate propose points the way it does.

A :class:`Recipe` is frozen: the model factory and its options (the output transform among
them), the acquisition and its weights, the initial design, random interleaving and the
acquisition maximiser's settings.  Each named surrogate has one (:data:`RECIPES`); the
:class:`~mfbo.Optimizer`'s arguments (``acquisition=``, ``n_initial=``, ``kappa=`` ...) make a
copy with those fields replaced (:func:`recipe_overrides`, :func:`dataclasses.replace`).

Add a surrogate with :func:`register_surrogate`, either as a model factory (it gets the
default recipe) or as a whole recipe::

    register_surrogate("smac-50", dataclasses.replace(get_recipe("rf-smac"),
                                                       random_interleave=0.5))
"""

from __future__ import annotations

import copy
import math
import numbers
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from acquisitions import make_acquisition

from .._core.arguments import check_int, is_int
from .models import BARTModel, EstimatorModel, Model, MondrianModel, RandomModel, \
    SMACForestModel, missing_method

__all__ = ["Recipe", "PerDimension", "RECIPES", "get_recipe", "recipe_for",
           "register_surrogate", "recipe_overrides", "make_model", "default_n_initial"]


@dataclass(frozen=True)
class PerDimension:
    """Initial-design size rule: ``factor`` points per dimension of the space."""

    factor: int

    def __post_init__(self):
        check_int(self.factor, "factor")

    def __call__(self, n_dims: int) -> int:
        return self.factor * n_dims


@dataclass(frozen=True)
class Recipe:
    """How one surrogate proposes points.

    Parameters
    ----------
    model : callable
        ``model(n_dims, random_state, **options)`` builds the :class:`~mfbo.proposal.models.Model`
        (usually a Model subclass).
    model_options : mapping, default={}
        Keyword arguments of ``model``; the optimizer's ``surrogate_options`` update them.
        The output transform lives here where the model takes one (the Mondrian forest's
        ``{"y_transform": "log"}``, SMAC's ``{"log_y": True}``).
    acquisition : str, default="ucb"
        Name for :func:`acquisitions.make_acquisition`.
    kappa : float or tuple of float, default=1
        UCB's exploration weight.  A tuple is a cycle: the proposal made from ``n``
        observations uses ``kappa[n % len(kappa)]`` (so ``(2, 1)`` explores more from an
        even number of observations than from an odd one).
    xi : float, default=0
        Exploration weight of EI/PI.
    initial_design : {"sobol", "random", "lhs"}, default="sobol"
    n_initial : int or callable, default=PerDimension(10)
        Size of the initial design: a number, or a rule mapping the number of dimensions to
        one (``10 * D``: SMAC3's).
    random_interleave : float, default=0
        Probability that a proposal after the initial design is uniformly random (SMAC's
        interleaving).
    n_random_candidates : int, default=10000
        Random/Sobol points scored per proposal in continuous or mixed spaces before local
        search (SMAC3's 10,000).
    local_search : bool, default=True
        Refine the best random points (and the best observations) by local search.
    patience, min_improvement : int, float, default=10, 0
        A local search stops after ``patience`` rounds whose gain is at most
        ``min_improvement`` times the random points' score spread (SMAC3: 10 rounds, any gain).
    search_patience : int, default=0
        All local searches stop once the best score any of them has found has risen by at
        most ``min_improvement`` times the score spread in this many rounds in a row (0: each
        search stops by ``patience`` alone, as in SMAC3).  The proposal is the best point
        found, so searches still creeping up from poorer starts after that only cost time.
    neighbourhood : {"one-exchange", "joint"}, default="one-exchange"
        Local-search moves in continuous coordinates: SMAC's one coordinate at a time, or all
        continuous coordinates together (Gaussian steps).
    joint_move_dims : int or None, default=None
        With the joint neighbourhood, a round makes as many Gaussian moves per point as
        one-exchange would in at most this many continuous dimensions (None: in all of them),
        so that its cost stops growing with the dimension.
    local_model_every : int, default=0
        Every this many model-based proposals (0: never), the proposal is instead the
        minimiser of a quadratic fitted to the observations nearest the best one
        (:func:`mfbo.proposal.local_models.quadratic_step`), when there are enough of them and no
        trial is pending; otherwise the acquisition's maximiser as usual.
    local_linear : bool, default=False
        When such a step is due but the quadratic gives none (too few observations for it,
        or a degenerate fit), take the step of a plane fitted the same way instead
        (:func:`mfbo.proposal.local_models.linear_step`: to the corner of the trust box its slope
        descends to), once there are enough for that (4 (1 + c) for c continuous
        coordinates, against 4 p for the quadratic's p coefficients).
    local_integers : bool, default=False
        Let the local quadratic step move the integer coordinates of at least five levels
        too (:func:`mfbo.proposal.local_models.ordinal_as_continuous`; the step is snapped back to
        the levels), where there are enough observations for that larger quadratic; until
        then, or if its fit is degenerate, the quadratic of the continuous coordinates
        alone as without it.  In a space without such an integer nothing changes.
    local_isotropic : {False, True, "if-integers", "if-curved"}, default=False
        When a local step is due but the quadratic gives none, first try an isotropic
        quadratic, one curvature for all coordinates
        (:func:`mfbo.proposal.local_models.isotropic_step`), over the continuous coordinates and the
        integers of at least five levels (snapped back to the levels); it needs
        ``2 (c + 2)`` observations for ``c`` such coordinates.  Then the linear step, if
        ``local_linear``.  ``"if-integers"``: only in a space with such an integer;
        ``"if-curved"``: there, and only where the fitted curvature is positive and the
        quadratic predicts its observations better than a plane (leave-one-out).
    plateau_escape : int, default=0
        After every this many consecutive evaluations since the initial design whose loss
        repeats, exactly, a loss already observed, the next proposal is uniformly random
        (0: never).  On a plateau (a cross-validated accuracy, a tree depth that no longer
        matters) the forest's mean is flat and the acquisition can keep proposing points of
        the same plateau; exact repeats do not happen on a continuous loss, so there this
        changes nothing.  A failed trial counts as a repeat when the study records it as
        the worst loss so far (``on_failure="worst"``): a run of failures is a stall too.
    plateau_kappa : float or None, default=None
        UCB's exploration weight (in place of ``kappa``) for every proposal made once any loss
        has repeated exactly, i.e. on a problem with plateaus (None: ``kappa`` throughout).  A
        flat mean gives the acquisition little to go on but the forest's spread, so a plateau
        problem can afford to explore more; on a continuous loss no loss repeats, so there
        this changes nothing.
    parzen_every : int, default=0
        Every this many model-based proposals (0: never), the acquisition is maximised over
        ``parzen_candidates`` points drawn from a Parzen density of the best quarter of the
        observations (:func:`mfbo.proposal.parzen.good_region_sample`, TPE's density of good points)
        instead of over random points refined by local search: a global step into the
        region the best points share, which the forest then chooses within.  Continuous or
        mixed spaces only (a candidate set is always enumerated).
    parzen_candidates : int, default=200
        Points drawn for such a proposal.  Few make the step close to a draw from the
        density; many make it the acquisition's maximum over the good region.
    parzen_when_converged : bool, default=False
        When a local quadratic step is due but its minimiser is a point already asked (the
        local model has converged on it and has nothing new to offer), make that proposal a
        Parzen step as above (``parzen_candidates`` points of the good region, no local
        search) instead of the full maximisation over random points and local searches.  A
        run that has converged otherwise pays for a search of the whole space in every such
        slot, the most expensive ask there is.
    """

    model: Callable[..., Model]
    model_options: Mapping[str, Any] = field(default_factory=dict)
    acquisition: str = "ucb"
    kappa: float | tuple[float, ...] = 1.0
    xi: float = 0.0
    initial_design: str = "sobol"
    n_initial: int | Callable[[int], int] = PerDimension(10)
    random_interleave: float = 0.0
    n_random_candidates: int = 10_000
    local_search: bool = True
    patience: int = 10
    min_improvement: float = 0.0
    search_patience: int = 0
    neighbourhood: str = "one-exchange"
    joint_move_dims: int | None = None
    local_model_every: int = 0
    local_linear: bool = False
    plateau_escape: int = 0
    plateau_kappa: float | None = None
    parzen_every: int = 0
    parzen_candidates: int = 200
    parzen_when_converged: bool = False
    local_integers: bool = False
    local_isotropic: bool | str = False

    def __post_init__(self):
        if not callable(self.model):
            raise TypeError(f"model must be callable (e.g. a Model subclass), got "
                            f"{self.model!r}.")
        if not isinstance(self.model_options, Mapping):
            raise TypeError(f"model_options must be a mapping, got {self.model_options!r}.")
        object.__setattr__(self, "model_options", MappingProxyType(dict(self.model_options)))
        object.__setattr__(self, "kappa", _checked_kappa(self.kappa))
        for k in self.kappas:
            make_acquisition(self.acquisition, kappa=k, xi=self.xi)  # checks all three
        if self.plateau_kappa is not None:
            _check_finite_number("plateau_kappa", self.plateau_kappa, "a finite number >= 0")
            if self.plateau_kappa < 0:
                raise ValueError(f"plateau_kappa must be a finite number >= 0, got "
                                 f"{self.plateau_kappa!r}.")
            object.__setattr__(self, "plateau_kappa", float(self.plateau_kappa))
        _check_initial_design(self.initial_design)
        if not (is_int(self.n_initial) or callable(self.n_initial)):
            raise ValueError(f"n_initial must be a positive integer or a rule n_dims -> size, "
                             f"got {self.n_initial!r}.")
        r = self.random_interleave
        if isinstance(r, bool) or not isinstance(r, numbers.Real) or not 0 <= r <= 1:
            raise ValueError(f"random_interleave must be a probability in [0, 1], got {r!r}.")
        check_int(self.n_random_candidates, "n_random_candidates")
        for name in ("local_search", "parzen_when_converged", "local_linear",
                     "local_integers"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}.")
        if not (isinstance(self.local_isotropic, bool)
                or self.local_isotropic in ("if-integers", "if-curved")):
            raise TypeError(f"local_isotropic must be True, False, 'if-integers' or "
                            f"'if-curved', got {self.local_isotropic!r}.")
        _check_stopping_rule(self.patience, self.min_improvement, self.search_patience, "")
        check_int(self.parzen_candidates, "parzen_candidates")
        for name in ("local_model_every", "plateau_escape", "parzen_every"):
            e = getattr(self, name)
            check_int(e, name, minimum=0)
        if self.neighbourhood not in ("one-exchange", "joint"):
            raise ValueError(f"neighbourhood must be 'one-exchange' or 'joint', got "
                             f"{self.neighbourhood!r}.")
        check_int(self.joint_move_dims, "joint_move_dims", or_none=True)

    def __getstate__(self):
        # a mappingproxy cannot be pickled: the options travel as a dict
        return {**self.__dict__, "model_options": dict(self.model_options)}

    def __setstate__(self, state):
        for name, value in state.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "model_options", MappingProxyType(dict(self.model_options)))

    @property
    def kappas(self) -> tuple[float, ...]:
        """UCB's cycle of exploration weights (one weight: a cycle of one)."""
        return self.kappa if isinstance(self.kappa, tuple) else (self.kappa,)

    def initial_size(self, n_dims: int) -> int:
        """The initial design's size for a space of ``n_dims`` dimensions."""
        n = self.n_initial(n_dims) if callable(self.n_initial) else self.n_initial
        if not is_int(n):
            raise ValueError(f"n_initial rule {self.n_initial!r} gave {n!r} for {n_dims} "
                             f"dimensions, not a positive integer.")
        return int(n)

    def build_model(self, n_dims: int, random_state, options: Mapping | None = None) -> Model:
        """``model(n_dims, random_state, **model_options, **options)``.

        The model carries the recipe's ``random_interleave`` as an attribute of that name, for
        callers that tell model-based proposals from random ones by looking at the model; the
        proposal policy itself reads the recipe."""
        model = self.model(n_dims, random_state, **{**self.model_options, **(options or {})})
        try:
            model.random_interleave = self.random_interleave
        except AttributeError:  # a model with __slots__ or a read-only attribute
            pass
        return model


def _check_finite_number(name: str, v, what: str) -> None:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be {what}, got {v!r}.")
    if not math.isfinite(float(v)):
        raise ValueError(f"{name} must be finite, got {v!r}.")


def _checked_kappa(kappa) -> float | tuple[float, ...]:
    """``kappa`` as a float, or a tuple of floats for a cycle (a list is accepted)."""
    what = "a number or a non-empty tuple of numbers"
    if isinstance(kappa, (tuple, list)):
        if not kappa:
            raise ValueError(f"kappa must be {what}, got an empty sequence.")
        for k in kappa:
            _check_finite_number("kappa", k, what)
        return tuple(float(k) for k in kappa)
    _check_finite_number("kappa", kappa, what)
    return float(kappa)


def _check_initial_design(kind) -> None:
    if kind not in ("sobol", "random", "lhs"):
        raise ValueError(f"initial_design must be 'sobol', 'random' or 'lhs', got {kind!r}.")


def _check_stopping_rule(patience, min_improvement, search_patience, prefix: str) -> None:
    """``prefix``: how the caller names the three settings (``"local_search"`` for the
    optimizer's dict, nothing for a recipe's fields)."""
    def name(key):
        return f"{prefix}[{key!r}]" if prefix else key
    check_int(patience, name("patience"))
    r = min_improvement
    if not isinstance(r, numbers.Real) or isinstance(r, bool) or not 0 <= r < math.inf:
        raise ValueError(f"{name('min_improvement')} must be a finite number >= 0, got {r!r}.")
    k = search_patience
    check_int(k, name("search_patience"), minimum=0)


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
    # the papers' online Mondrian forest under UCB (kappa 1).  5 D Sobol points: the papers
    # do not give the initial design's size, and on Branin 5 D did better than 6 D.  Fewer
    # random points than SMAC3 and local searches that stop once their gains are negligible:
    # on Branin as good at a third of the time.  Joint moves: the forest's axis-aligned cells
    # otherwise make the search crawl along one axis at a time; as many of them as in 6
    # dimensions at most: on the bbob dev split (D = 10, 20) as good as moves growing with D,
    # at 0.4 of the time in 20-D.  Every third model-based proposal a local quadratic step: on
    # the bbob dev split (D = 2) better than none and than every fifth.  (README, "How the
    # Mondrian defaults were chosen".)  A random proposal after every three losses in a row
    # that repeat one already seen: on the sklearn-tune dev split (budget 50) UCB otherwise
    # keeps sampling the plateau of the best value; on continuous losses it never triggers.
    # The empirical and the exact BP posterior of the one forest in turn, proposal by proposal:
    # on the sklearn-tune dev split better than either alone (BP alone was worse on Branin and
    # the SVM grid); see README for the test splits.  Every second model-based proposal the
    # acquisition's best of 200 points drawn from a Parzen density of the best quarter of the
    # observations (no local search): on the sklearn-tune dev split better than without
    # (decision trees and random forests most), level on the bbob 2-D dev split.  A Parzen
    # step also where a local quadratic step is due but its minimiser was already asked: level
    # on the bbob 2-D and 5-D dev splits at 100 D evaluations (identical runs on the
    # sklearn-tune dev split and Branin, where it never happens), and a converged run's
    # median ask at D = 6 drops below 10 ms.  Where a local step is due but there are too
    # few observations for the quadratic, a plane's step to the trust box's downhill corner:
    # on the sklearn-tune dev split better (random forests, SVMs, MLPs), level on the bbob
    # dev splits; a loss lowest at bounds of its ranges is followed there.  In a space with
    # an integer coordinate, a second forest on the residuals of a linear trend, and the
    # proposals from whichever of the two predicted the last 10 observations better: on the
    # sklearn-tune dev split better (decision trees, random forests, MLPs), level on the mixed
    # dev split, where the trend taken always was worse (mixed Ackley); continuous spaces
    # (bbob, Branin, the paper problems) are unchanged.  In a space with an integer of five
    # levels or more, where a local step is due but the quadratic lacks observations, first
    # an isotropic quadratic over the continuous coordinates and those integers, where its
    # curvature is positive and it predicts its observations better than a plane: on the
    # mixed dev split better (mixed Ackley, most in 10-D at 50 evaluations), on the
    # sklearn-tune dev trees, forests and MLPs level (random forests better); taken wherever
    # it can be fitted it was worse on the test split's decision trees.  Continuous spaces
    # are unchanged.
    "mondrian": Recipe(model=MondrianModel,
                       model_options={"y_transform": "log", "posterior": "alternating",
                                      "trend": "if-integers", "trend_window": 10},
                       acquisition="ucb", n_initial=PerDimension(5), n_random_candidates=2_000,
                       patience=3, min_improvement=1e-3, neighbourhood="joint",
                       joint_move_dims=6, local_model_every=3, plateau_escape=3,
                       parzen_every=2, parzen_when_converged=True, local_linear=True,
                       local_isotropic="if-curved"),
    # SMAC3 2.4's HPO facade: log-scaled losses, log-normal EI, 20 % random interleaving,
    # 10 D initial points, 10,000 random points, local search for 10 rounds of any gain
    "rf-smac": Recipe(model=SMACForestModel, model_options={"log_y": True},
                      acquisition="lognormal-ei", random_interleave=0.2,
                      n_initial=PerDimension(10)),
    "random": Recipe(model=RandomModel, random_interleave=1.0),
    # BART with particle Gibbs, refitted on every tell (mfbo.proposal.models.BARTModel), under the
    # default recipe's UCB (kappa 1) and 10 D Sobol points; fewer random candidates than the
    # default because every prediction sums 50 trees over 100 posterior draws
    "bart": Recipe(model=BARTModel, n_random_candidates=2_000),
}
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
        recipe = factory
    elif callable(factory):
        recipe = Recipe(model=factory)
    else:
        raise TypeError(f"factory must be callable (e.g. a Model subclass) or a Recipe, got "
                        f"{factory!r}.")
    _RECIPES[key] = recipe


def recipe_for(surrogate) -> Recipe:
    """The recipe of ``surrogate``: a registered name, a :class:`Recipe`, or an estimator
    object with ``fit`` and ``predict(X, return_std=True)`` (the default recipe)."""
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


def make_model(surrogate, recipe: Recipe, n_dims: int, random_state,
               options: Mapping | None = None) -> Model:
    """``recipe``'s model for ``surrogate`` (its name, the recipe itself or an estimator),
    with ``surrogate_options`` ``options``; a ``TypeError`` of the factory names them."""
    if not isinstance(surrogate, (str, Recipe)):
        return recipe.build_model(n_dims, random_state, options)
    try:
        return recipe.build_model(n_dims, random_state, options)
    except TypeError as exc:
        name = surrogate.lower() if isinstance(surrogate, str) else \
            getattr(recipe.model, "__name__", repr(recipe.model))
        raise TypeError(f"surrogate_options for {name!r}: {exc}") from None


def default_n_initial(surrogate, n_dims: int) -> int:
    """The initial-design size of ``surrogate``'s recipe for ``n_dims`` dimensions (the
    default recipe's for an estimator or an unknown name)."""
    if isinstance(surrogate, Recipe):
        return surrogate.initial_size(n_dims)
    if isinstance(surrogate, str) and surrogate.lower() in RECIPES:
        return RECIPES[surrogate.lower()].initial_size(n_dims)
    return Recipe(model=Model).initial_size(n_dims)


def recipe_overrides(acquisition=None, kappa=None, xi=None, initial_design=None,
                     n_initial=None, n_random_candidates=None, local_search=None,
                     neighbourhood=None) -> dict:
    """The recipe fields that the optimizer's arguments set (None: the recipe's), checked.

    ``local_search`` is a bool (on or off) or a dict with any of ``"patience"``,
    ``"min_improvement"`` and ``"search_patience"`` (on, with those settings).  Apply the
    result with ``dataclasses.replace(recipe, **changes)``."""
    if initial_design is not None:
        _check_initial_design(initial_design)
    check_int(n_initial, "n_initial", or_none=True)
    check_int(n_random_candidates, "n_random_candidates", or_none=True)
    changes: dict[str, Any] = {}
    if isinstance(local_search, Mapping):
        unknown = set(local_search) - {"patience", "min_improvement", "search_patience"}
        if unknown:
            raise ValueError(f"local_search has unknown key(s) {sorted(unknown)}; expected "
                             f"'patience', 'min_improvement' and/or 'search_patience'.")
        _check_stopping_rule(local_search.get("patience", 1),
                             local_search.get("min_improvement", 0.0),
                             local_search.get("search_patience", 0), "local_search")
        changes.update(local_search=True, **local_search)
    elif isinstance(local_search, bool):
        changes["local_search"] = local_search
    elif local_search is not None:
        raise TypeError(f"local_search must be a bool or a dict, got {local_search!r}.")
    if neighbourhood not in (None, "one-exchange", "joint"):
        raise ValueError(f"neighbourhood must be None, 'one-exchange' or 'joint', got "
                         f"{neighbourhood!r}.")
    if kappa is not None:
        kappa = _checked_kappa(kappa)
    if xi is not None:
        _check_finite_number("xi", xi, "a number")
    given = {"acquisition": acquisition, "kappa": kappa,
             "xi": None if xi is None else float(xi), "initial_design": initial_design,
             "n_initial": None if n_initial is None else int(n_initial),
             "n_random_candidates": None if n_random_candidates is None else
             int(n_random_candidates), "neighbourhood": neighbourhood}
    changes.update({k: v for k, v in given.items() if v is not None})
    return changes
