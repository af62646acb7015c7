"""Recipes: frozen proposal policies per named surrogate (a model, an acquisition, an initial
design and an ordered list of steps), overridden by the optimizer's arguments, and registered
with a surrogate."""

import dataclasses
import pickle

import pytest

import mfbo
from mfbo import Optimizer, Recipe, get_recipe
from mfbo.proposal.models import MondrianModel, RandomModel, SMACForestModel
from mfbo.proposal import (Acquisition, AcquisitionSearch, BranchBandit, InitialDesign,
                           LocalStep, ParzenStep, PerDimension, PlateauEscape, RandomInterleave,
                           StallEscape, as_recipe)
from mfbo.proposal.recipes import RECIPES, register_surrogate
from tests.mfbo.nearest_model import Nearest
from tests.support import SPACE, quad


def run(opt, n):
    for _ in range(n):
        t = opt.ask()
        opt.tell(t, quad(**t.params))
    return opt


@pytest.fixture
def registered():
    """Names registered by a test, removed again after it."""
    names = []
    yield names
    for name in names:
        mfbo.proposal.recipes._RECIPES.pop(name, None)


def test_built_in_recipes():
    mond, smac, rand = get_recipe("mondrian"), get_recipe("RF-SMAC"), get_recipe("random")
    assert (mond.model, smac.model, rand.model) == (MondrianModel, SMACForestModel, RandomModel)
    assert mond.acquisition == Acquisition("ucb", kappa=1.0, xi=0.0)
    assert smac.acquisition.name == "lognormal-ei"
    assert mond.initial_size(3) == 15 and smac.initial_size(3) == 30
    assert (mond.random_interleave, smac.random_interleave, rand.random_interleave) == \
        (0.0, 0.2, 1.0)
    msearch, ssearch = mond.step(AcquisitionSearch), smac.step(AcquisitionSearch)
    assert (msearch.n_random, ssearch.n_random) == (2_000, 10_000)
    assert (msearch.patience, msearch.min_improvement) == (3, 1e-3)
    assert (ssearch.patience, ssearch.min_improvement) == (10, 0.0)
    assert (msearch.neighbourhood, ssearch.neighbourhood) == ("joint", "one-exchange")
    # the default policy reads as its steps, in order
    assert [type(s) for s in mond.steps] == [RandomInterleave, PlateauEscape, StallEscape,
                                             BranchBandit, LocalStep, ParzenStep,
                                             AcquisitionSearch]
    assert mond.step(StallEscape) == StallEscape(
        window=4, move="exchange", integers=False, novel=True, max_escapes=1, conditional=False)
    assert (mond.step(LocalStep).every, mond.step(PlateauEscape).every) == (3, 3)
    assert smac.step(PlateauEscape) is None and smac.step(LocalStep) is None
    assert mond.model_options == {"y_transform": "log", "posterior": "alternating",
                                  "trend": "if-integers", "trend_window": 10,
                                  "robust_shift": True}
    assert smac.model_options == {"log_y": True}
    assert mfbo.SURROGATES is RECIPES and {"mondrian", "random", "rf-smac"} <= set(RECIPES)
    assert all(RECIPES[name].name == name for name in RECIPES)


def test_a_recipe_is_frozen():
    recipe = get_recipe("mondrian")
    with pytest.raises(dataclasses.FrozenInstanceError):
        recipe.acquisition = "ei"
    with pytest.raises(dataclasses.FrozenInstanceError):
        recipe.step(LocalStep).every = 5
    with pytest.raises(TypeError):
        recipe.model_options["y_transform"] = None
    options = {"y_transform": "rank"}
    own = Recipe(model=MondrianModel, model_options=options)
    options["y_transform"] = None  # the recipe holds its own copy
    assert own.model_options["y_transform"] == "rank"
    with pytest.raises(TypeError):
        RECIPES["mine"] = own  # read-only: register_surrogate is the way


def test_a_recipe_pickles_and_stays_read_only():
    for name in RECIPES:
        assert pickle.loads(pickle.dumps(get_recipe(name))) == get_recipe(name)
    own = Recipe(model=MondrianModel, model_options={"y_transform": "rank"},
                 acquisition=Acquisition(kappa=0.5))
    copy = pickle.loads(pickle.dumps(own))
    assert copy == own and copy.model_options == {"y_transform": "rank"}
    with pytest.raises(TypeError):
        copy.model_options["y_transform"] = None
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.acquisition.kappa = 2.0
    # a study run with the unpickled recipe proposes what the original does
    a = run(Optimizer(SPACE, surrogate=own, random_state=3), 12)
    b = run(Optimizer(SPACE, surrogate=copy, random_state=3), 12)
    assert [t.params for t in a.trials] == [t.params for t in b.trials]


def test_get_recipe_names_the_argument():
    with pytest.raises(ValueError, match=r"name must be one of \[.*'mondrian'.*\], got 'nope'"):
        get_recipe("nope")
    with pytest.raises(ValueError, match="name"):
        get_recipe(3)


@pytest.mark.parametrize("make, exc, match", [
    (lambda: Recipe(model="MondrianModel"), TypeError, "model must be callable"),
    (lambda: Recipe(model=MondrianModel, acquisition="foo"), ValueError, "acquisition"),
    (lambda: Recipe(model=MondrianModel, acquisition=3), TypeError, "acquisition"),
    (lambda: Acquisition(kappa=-1.0), ValueError, "kappa"),
    (lambda: Acquisition(kappa=()), ValueError, "kappa must be a number or a non-empty tuple"),
    (lambda: Acquisition(kappa=(2.0, -1.0)), ValueError, "kappa"),
    (lambda: Acquisition(kappa=(2.0, float("inf"))), ValueError, "kappa must be finite"),
    (lambda: Acquisition(kappa=(2.0, "1")), TypeError,
     "kappa must be a number or a non-empty tuple"),
    (lambda: Acquisition(kappa=True), TypeError, "kappa"),
    (lambda: Acquisition(plateau_kappa=-1.0), ValueError, "plateau_kappa"),
    (lambda: InitialDesign("grid"), ValueError, "initial_design"),
    (lambda: InitialDesign(size=0), ValueError, "n_initial"),
    (lambda: Recipe(model=MondrianModel, initial_design="sobol"), TypeError, "initial_design"),
    (lambda: RandomInterleave(1.5), ValueError, r"RandomInterleave\(probability=\.\.\.\)"),
    (lambda: AcquisitionSearch(n_random=0), ValueError, r"AcquisitionSearch\(n_random=\.\.\.\)"),
    (lambda: AcquisitionSearch(local_search="yes"), TypeError, "local_search"),
    (lambda: AcquisitionSearch(patience=0), ValueError, "patience"),
    (lambda: AcquisitionSearch(min_improvement=float("nan")), ValueError, "min_improvement"),
    (lambda: AcquisitionSearch(search_patience=-1), ValueError, "search_patience"),
    (lambda: AcquisitionSearch(search_patience=2.0), ValueError, "search_patience"),
    (lambda: AcquisitionSearch(neighbourhood="star"), ValueError, "neighbourhood"),
    (lambda: AcquisitionSearch(joint_move_dims=0), ValueError, r"AcquisitionSearch\(joint_move_dims=\.\.\.\)"),
    (lambda: PlateauEscape(0), ValueError, r"PlateauEscape\(every=\.\.\.\)"),
    (lambda: LocalStep(every=0), ValueError, r"LocalStep\(every=\.\.\.\)"),
    (lambda: LocalStep(linear=1), TypeError, r"LocalStep\(linear=\.\.\.\)"),
    (lambda: LocalStep(integers="yes"), TypeError, r"LocalStep\(integers=\.\.\.\)"),
    (lambda: LocalStep(isotropic="always"), TypeError, r"LocalStep\(isotropic=\.\.\.\)"),
    (lambda: ParzenStep(every=-1), ValueError, r"ParzenStep\(every=\.\.\.\)"),
    (lambda: ParzenStep(n_candidates=0), ValueError, r"ParzenStep\(n_candidates=\.\.\.\)"),
    (lambda: ParzenStep(when_converged=None), TypeError, r"ParzenStep\(when_converged=\.\.\.\)"),
    (lambda: Recipe(model=MondrianModel, steps=[InitialDesign()]), TypeError, "steps"),
    (lambda: Recipe(model=MondrianModel, steps=["search"]), TypeError, "steps"),
    (lambda: Recipe(model=MondrianModel, steps=AcquisitionSearch()), TypeError, "steps"),
    (lambda: Recipe(model=MondrianModel, model_options=[("y_transform", "log")]), TypeError,
     "model_options"),
])
def test_a_recipe_and_its_steps_check_their_settings(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_a_step_replaced_or_removed_gives_a_new_recipe():
    base = get_recipe("mondrian")
    more = base.with_step(PlateauEscape(5))
    assert more.step(PlateauEscape) == PlateauEscape(5) and base.step(PlateauEscape).every == 3
    assert [type(s) for s in more.steps] == [type(s) for s in base.steps]  # in its place
    none = base.without(PlateauEscape)
    assert none.step(PlateauEscape) is None and len(none.steps) == len(base.steps) - 1
    # one setting changed, the step's others kept, in its place
    no_linear = base.with_settings(LocalStep, linear=False)
    assert no_linear.step(LocalStep) == dataclasses.replace(base.step(LocalStep), linear=False)
    assert [type(s) for s in no_linear.steps] == [type(s) for s in base.steps]
    with pytest.raises(ValueError, match="no LocalStep step"):
        get_recipe("rf-smac").with_settings(LocalStep, linear=False)
    with pytest.raises(ValueError, match=r"LocalStep\(every=\.\.\.\)"):
        base.with_settings(LocalStep, every=0)
    added = get_recipe("rf-smac").with_step(LocalStep(every=2))
    assert [type(s) for s in added.steps] == [RandomInterleave, LocalStep, AcquisitionSearch]
    assert Recipe(model=MondrianModel, steps=[AcquisitionSearch()]).steps == \
        (AcquisitionSearch(),)  # a list is kept as a tuple


def test_optimizer_arguments_override_the_recipe():
    base = get_recipe("mondrian")
    opt = Optimizer(SPACE, acquisition="ei", kappa=2.0, xi=0.1, initial_design="lhs",
                    n_initial=3, n_random_candidates=64,
                    local_search={"patience": 5, "search_patience": 7},
                    neighbourhood="one-exchange")
    search = base.step(AcquisitionSearch)
    assert opt.recipe == dataclasses.replace(
        base, acquisition=Acquisition("ei", kappa=2.0, xi=0.1),
        initial_design=InitialDesign("lhs", 3)).with_step(dataclasses.replace(
            search, n_random=64, patience=5, search_patience=7, neighbourhood="one-exchange"))
    # a key not given: the recipe's
    assert opt.recipe.step(AcquisitionSearch).min_improvement == search.min_improvement
    assert get_recipe("mondrian") is base and base.acquisition.name == "ucb"  # base untouched
    assert (opt.acquisition.name, opt.n_initial, opt.n_random_candidates,
            opt.initial_design) == ("ei", 3, 64, "lhs")
    off = Optimizer(SPACE, surrogate="rf-smac", local_search=False)
    smac = get_recipe("rf-smac")
    assert off.recipe == smac.with_step(dataclasses.replace(smac.step(AcquisitionSearch),
                                                            local_search=False))
    assert not off.local_search and Optimizer(SPACE).recipe == base
    # an override and a recipe with that setting give the same study
    a = run(Optimizer(SPACE, random_state=0, acquisition="ei", n_initial=4,
                      n_random_candidates=128), 8)
    b = run(Optimizer(SPACE, random_state=0, n_random_candidates=128, surrogate=dataclasses.replace(
        base, acquisition="ei", initial_design=InitialDesign("sobol", 4))), 8)
    assert [t.params for t in a.trials] == [t.params for t in b.trials]
    # the search's settings need a search step to set
    bare = Recipe(model=MondrianModel, steps=())
    with pytest.raises(ValueError, match="AcquisitionSearch"):
        Optimizer(SPACE, surrogate=bare, n_random_candidates=10)


def test_a_policy_without_steps_proposes_random_points():
    bare = Recipe(model=MondrianModel, initial_design=InitialDesign(size=3), steps=())
    opt = run(Optimizer(SPACE, surrogate=bare, random_state=0), 10)
    assert opt.n_finished == 10 and len({tuple(t.params.values()) for t in opt.trials}) == 10


def test_surrogate_options_update_the_recipes_model_options():
    assert Optimizer(SPACE).model.y_transform == "log"
    assert Optimizer(SPACE, surrogate_options={"y_transform": None}).model.y_transform is None
    own = Recipe(model=MondrianModel, model_options={"y_transform": "rank", "n_estimators": 3})
    opt = Optimizer(SPACE, surrogate=own, surrogate_options={"n_estimators": 4})
    assert opt.model.y_transform == "rank" and opt.model.forest.n_estimators == 4
    with pytest.raises(TypeError, match="surrogate_options for 'MondrianModel'"):
        Optimizer(SPACE, surrogate=own, surrogate_options={"bogus": 1})


def test_a_registered_factory_gets_the_default_recipe(registered):
    registered.append("nearest-recipe")
    register_surrogate("Nearest-Recipe", Nearest)
    assert get_recipe("nearest-recipe") == Recipe(model=Nearest)
    opt = Optimizer({"x": (0.0, 1.0)}, surrogate="nearest-recipe", random_state=0,
                    surrogate_options={"scale": 2.0})
    assert isinstance(opt.model, Nearest) and opt.model.scale == 2.0
    assert opt.n_initial == 10 and opt.acquisition.name == "ucb"
    assert as_recipe("nearest-recipe").initial_size(3) == 30
    assert as_recipe("nearest-recipe").name == "nearest-recipe"
    with pytest.raises(TypeError, match="factory"):
        register_surrogate("other", 3)
    with pytest.raises(ValueError, match="built-in"):
        register_surrogate("rf-smac", get_recipe("mondrian"))


def test_a_registered_recipe_is_used_whole(registered):
    registered.append("smac-half")
    smac = get_recipe("rf-smac")
    half = dataclasses.replace(smac, initial_design=InitialDesign("sobol", PerDimension(2)),
                               steps=(RandomInterleave(0.5), AcquisitionSearch(n_random=64)))
    register_surrogate("smac-half", half)
    opt = Optimizer(SPACE, surrogate="smac-half", random_state=0)
    assert opt.recipe == half and opt.n_initial == 4 and opt.acquisition.name == "lognormal-ei"
    # the model carries its recipe's interleaving probability for callers that read it there
    assert opt.model.random_interleave == 0.5 == opt.recipe.random_interleave
    assert Optimizer(SPACE).model.random_interleave == 0.0
    run(opt, 12)
    assert opt.n_finished == 12
    r = mfbo.minimize(quad, SPACE, n_calls=8, surrogate="smac-half", random_state=0,
                      progress_bar=False)
    assert len(r.trials) == 8 and as_recipe("smac-half").initial_design.size_within(2, 100) == 4
    assert as_recipe("smac-half").initial_design.size_within(2, 8) == 2  # a quarter of 8


def test_an_initial_design_rule_must_give_a_size():
    bad = Recipe(model=MondrianModel, initial_design=InitialDesign(size=lambda d: 0))
    with pytest.raises(ValueError, match="n_initial rule"):
        Optimizer(SPACE, surrogate=bad)
    assert Optimizer(SPACE, surrogate=bad, n_initial=2).n_initial == 2


def test_a_kappa_cycle_gives_each_proposal_its_weight():
    acq = Acquisition(kappa=[2, 1])  # a list is kept as a tuple
    assert acq.kappa == (2.0, 1.0) and acq.kappas == (2.0, 1.0)
    assert get_recipe("rf-smac").acquisition.kappas == (1.0,)
    opt = Optimizer(SPACE, kappa=(3, 0.5))
    assert opt.recipe.acquisition.kappa == (3.0, 0.5)
    assert Optimizer(SPACE, kappa=2).recipe.acquisition.kappa == 2.0
    for bad, exc in (([], ValueError), ((1.0, None), TypeError), ((1.0, float("nan")), ValueError)):
        with pytest.raises(exc, match="kappa"):
            Optimizer(SPACE, kappa=bad)
    # UCB = kappa * std - mean: at mean 0 and std 1 the score is the weight itself
    weights = [float(opt.proposer.acquisition_for(n)([0.0], [1.0])[0]) for n in range(5)]
    assert weights == [3.0, 0.5, 3.0, 0.5, 3.0]
    # a cycle of one weight, or of equal weights, is that constant weight
    a = run(Optimizer(SPACE, random_state=3, kappa=2.0, n_initial=4), 10)
    b = run(Optimizer(SPACE, random_state=3, kappa=(2.0, 2.0), n_initial=4), 10)
    assert [t.params for t in a.trials] == [t.params for t in b.trials]


def test_a_kappa_cycle_proposes_what_its_weight_of_the_moment_would():
    """The proposal from n observations is the one the constant weight kappa[n % 2] makes
    from the same observations (same seed, hence the same proposal stream)."""
    kappas = (4.0, 0.25)
    cycle = run(Optimizer(SPACE, random_state=5, kappa=kappas, n_initial=4), 12)
    params = [t.params for t in cycle.trials]
    values = [t.value for t in cycle.trials]
    for n in range(4, 12):
        alone = Optimizer(SPACE, random_state=5, kappa=kappas[n % 2], n_initial=4)
        alone.enqueue(params[:n])
        for v in values[:n]:
            alone.tell(alone.ask(), v)
        assert alone.ask().params == params[n]
    # and the two weights do not propose the same points
    constant = run(Optimizer(SPACE, random_state=5, kappa=kappas[0], n_initial=4), 12)
    assert [t.params for t in constant.trials] != params
