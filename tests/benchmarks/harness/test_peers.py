"""The peers (only when installed): what they search on grids, tables and mixed spaces, and
the samplers they ask for; every method on conditional spaces: what each proposes (active
parameters only), what is evaluated (never a forbidden configuration), and the peers' own
terms for conditions (a Hyperopt tree, a ConfigSpace)."""

import dataclasses

import numpy as np
import pytest

from benchmarks.harness import methods, peers
from benchmarks.problems import data
from benchmarks.problems.conditional import FORBIDDEN_1, JENATTON_SPACE, cash_space
from benchmarks.problems.problems import ConfigProblem, get_problem
from mfbo import (AllOf, AnyOf, Between, Categorical, Equals, Greater, In, Integer, Less,
                  NotEquals, Real, Relation, Space)


def _have(name):
    try:
        data.fetch_file(name, download=False)
        return True
    except FileNotFoundError:
        return False


PEERS = {"smac": "smac", "optuna": "optuna", "optuna-mv": "optuna", "optuna-indep": "optuna",
         "optuna-group": "optuna", "hyperopt": "hyperopt", "skopt-forest": "skopt",
         "skopt-gp": "skopt"}


@pytest.mark.parametrize("name", sorted(PEERS))
def test_peer_on_a_random_grid_searches_the_box_and_on_a_table_the_cells(name):
    pytest.importorskip(PEERS[name])
    r = methods.run_method(name, get_problem("branin-grid"), 5, 0)
    assert len(r.values) == 5 and None not in r.values
    assert r.continuous and r.grid is None and r.optimizer_time_s >= 0
    if _have("lda_on_grid.csv"):
        lda = get_problem("lda-grid")
        r = methods.run_method(name, lda, 5, 1)
        # every proposal was a table cell (an off-grid point would have failed the look-up)
        assert len(r.values) == 5 and None not in r.values and not r.continuous
        assert set(r.values) <= set(lda.values.tolist())


@pytest.mark.parametrize("name", sorted(PEERS))
def test_peer_on_a_mixed_problem_proposes_integers_and_levels(name):
    pytest.importorskip(PEERS[name])
    problem = get_problem("mixed-ackley-7d")  # reals, integers and a categorical of 4 levels

    class Recording:  # the problem, keeping what the peer proposed
        seen = []

        def __getattr__(self, name):
            return getattr(problem, name)

        def __call__(self, **params):
            self.seen.append(params)
            return problem(**params)  # rejects a non-integral integer or an unknown level

    r = methods.run_method(name, Recording(), 5, 0)
    assert len(r.values) == 5 and None not in r.values and r.continuous
    assert len(Recording.seen) == 5
    assert all(isinstance(p["z1"], int) and p["c1"] in problem.space["c1"].choices
               for p in Recording.seen)


def test_smac_ends_a_run_when_a_small_space_is_exhausted():
    pytest.importorskip("smac")
    problem = get_problem("sklearn-kNN-iris-acc")  # 25 x 4 = 100 configurations
    r = methods.run_method("smac", problem, 120, 0)
    assert 0 < len(r.values) <= 100 and None not in r.values


def test_optuna_mv_asks_for_the_multivariate_tpe(monkeypatch):
    optuna = pytest.importorskip("optuna")
    made = []
    real = optuna.samplers.TPESampler

    def sampler(**kwargs):
        made.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(optuna.samplers, "TPESampler", sampler)
    methods.run_method("optuna-mv", get_problem("branin"), 3, 4)
    methods.run_method("optuna", get_problem("branin"), 3, 4)
    assert made == [{"seed": 4, "multivariate": True, "group": False}, {"seed": 4}]


def test_peers_see_integers_and_categoricals():
    kind, dims = peers.peer_space(get_problem("sklearn-lasso-diabetes-mse"))
    assert kind == "mixed"
    assert dims["alpha"] == ("real", 1e-2, 1e2, True)
    assert dims["max_iter"] == ("int", 10, 5000, True)
    assert dims["fit_intercept"] == ("cat", [False, True])
    assert peers._level(dims["fit_intercept"], "True") is True
    assert peers.peer_space(get_problem("branin"))[0] == "box"


# -- conditional spaces ----------------------------------------------------------------------------
#: method -> the module it needs (None: mfbo's own)
METHODS = {"mondrian": None, "rf-smac": None, "random": None, "optuna": "optuna",
           "optuna-group": "optuna", "optuna-mv": "optuna", "hyperopt": "hyperopt",
           "smac": "smac"}


def _active_names(space, params):
    """The active parameters of ``params`` by the definition (each one whose condition holds
    on the active ones before it), whether or not ``params`` holds them."""
    out = {}
    for name, dim in space.dimensions.items():
        if dim.when is None or dim.when.holds(out):
            out[name] = params.get(name)
    return list(out)


def _forbidden(space, params):
    return any(f.holds(params) for f in space.forbidden)


class Recording:
    """A problem whose proposals (what the method passes) and evaluations (what reaches its
    objective, after the problem's checks) are recorded."""

    def __init__(self, problem):
        self.proposed, self.evaluated = [], []
        self.problem = dataclasses.replace(
            problem, objective=lambda p: self.evaluated.append(p) or problem.objective(p))

    def __getattr__(self, name):
        return getattr(self.problem, name)

    def __call__(self, **params):
        self.proposed.append(params)
        return self.problem(**params)


def _check_run(name, problem, budget, seed):
    if METHODS[name]:
        pytest.importorskip(METHODS[name])
    recording = Recording(problem)
    run = methods.run_method(name, recording, budget, seed)
    space = problem._space
    assert len(run.values) == len(recording.proposed) == budget and run.continuous
    for params in recording.proposed:  # exactly the active parameters, each in its domain
        assert sorted(params) == sorted(_active_names(space, params)), params
        for n, v in params.items():
            space.dimensions[n].validate(n, v)
    refused = [_forbidden(space, p) for p in recording.proposed]
    # a forbidden proposal is a failed evaluation, never evaluated; the others are evaluated
    assert [v is None for v in run.values] == refused
    assert recording.evaluated == [p for p, r in zip(recording.proposed, refused) if not r]
    return refused


@pytest.mark.parametrize("name", sorted(METHODS))
def test_each_method_proposes_active_parameters_and_evaluates_no_forbidden_one(name):
    refused = _check_run(name, get_problem("cond-forbidden-1"), 5, 0)
    if METHODS[name] is None:
        assert not any(refused)  # mfbo never proposes a forbidden configuration


@pytest.mark.parametrize("name", sorted(METHODS))
def test_each_method_runs_a_cash_problem_and_a_tree(name):
    _check_run(name, get_problem("cond-cash-moons"), 3, 1)
    _check_run(name, get_problem("cond-jenatton"), 4, 2)


#: nine tenths of this space are forbidden: peers propose forbidden configurations at once
MOSTLY_FORBIDDEN = ConfigProblem(
    "mostly-forbidden", Space({"kind": Categorical(["p", "q"]), "x": Real(0.0, 1.0),
                               "z": Integer(1, 9, when={"kind": "q"})},
                              forbidden=[Greater("x", 0.1)]),
    None, 0.0, 5, objective=lambda p: p["x"] + p.get("z", 0))


@pytest.mark.parametrize("name", sorted(METHODS))
def test_a_forbidden_proposal_is_a_failed_evaluation_and_the_run_goes_on(name):
    refused = _check_run(name, MOSTLY_FORBIDDEN, 5, 3)
    if METHODS[name] is None or name == "smac":  # (SMAC3 is given the forbidden clauses)
        assert not any(refused)
    else:
        assert any(refused)  # with probability 1 - 0.1 ** 5


def test_optuna_group_asks_for_the_grouped_multivariate_tpe(monkeypatch):
    optuna = pytest.importorskip("optuna")
    made, real = [], optuna.samplers.TPESampler
    monkeypatch.setattr(optuna.samplers, "TPESampler",
                        lambda **kwargs: made.append(kwargs) or real(**kwargs))
    methods.run_method("optuna-group", get_problem("cond-jenatton"), 3, 4)
    assert made == [{"seed": 4, "multivariate": True, "group": True}]


def test_scikit_optimize_refuses_a_conditional_space():
    pytest.importorskip("skopt")
    with pytest.raises(ValueError, match="no conditions"):
        methods.run_method("skopt-forest", get_problem("cond-jenatton"), 3, 0)


def test_the_peers_see_a_conditional_space_as_it_is():
    kind, space = peers.peer_space(get_problem("cond-forbidden-2"))
    assert kind == "conditional" and space == get_problem("cond-forbidden-2")._space
    plain = ConfigProblem("plain", Space({"a": Categorical(["u", "v"]), "n": Integer(1, 5)}),
                          None, None, 5, objective=lambda p: 0.0)
    assert peers.peer_space(plain) == ("mixed", {"a": ("cat", ["u", "v"]),
                                                 "n": ("int", 1, 5, False)})


def test_decided_is_three_valued():
    fixed = {"a": "u"}
    assert peers._decided(Equals("a", "u"), fixed) is True
    assert peers._decided(Equals("a", "v"), fixed) is False
    assert peers._decided(Less("x", 1.0), fixed) is None
    assert peers._decided(AllOf(Equals("a", "v"), Less("x", 1.0)), fixed) is False
    assert peers._decided(AllOf(Equals("a", "u"), Less("x", 1.0)), fixed) is None
    assert peers._decided(AnyOf(Equals("a", "u"), Less("x", 1.0)), fixed) is True
    assert peers._decided(AnyOf(Equals("a", "v"), Less("x", 1.0)), fixed) is None
    assert peers._decided(AnyOf(Equals("a", "v"), NotEquals("a", "u")), fixed) is False


def _labels(expression):
    """Every label of a Hyperopt expression."""
    from hyperopt import pyll

    return {node.arg["label"].obj for node in pyll.dfs(pyll.as_apply(expression))
            if node.name == "hyperopt_param"}


def _hyperopt_samples(space, n, seed):
    """The labels of Hyperopt's space of ``space`` and ``n`` configurations read back from
    its samples, each checked valid in ``space``."""
    pytest.importorskip("hyperopt")
    from hyperopt.pyll.stochastic import sample

    expression, read = peers.hyperopt_space(space)
    rng = np.random.default_rng(seed)
    configurations = [read(sample(expression, rng=rng)) for _ in range(n)]
    for params in configurations:
        assert space.validate(params) == params
    return _labels(expression), configurations


def test_the_hyperopt_tree_of_the_jenatton_function_is_its_tree():
    labels, configurations = _hyperopt_samples(JENATTON_SPACE, 200, 0)
    assert labels == {"x1", "x2[x1=0]", "r8[x1=0]", "x3[x1=1]", "r9[x1=1]", "x4[x1=0,x2=0]",
                      "x5[x1=0,x2=1]", "x6[x1=1,x3=0]", "x7[x1=1,x3=1]"}
    leaves = {n for params in configurations for n in params if n in ("x4", "x5", "x6", "x7")}
    assert leaves == {"x4", "x5", "x6", "x7"}


def test_the_hyperopt_tree_gives_each_branch_its_own_parameters_and_reads_back_the_rest():
    space = Space({"model": Categorical(["rf", "et", "svm"]),
                   "n": Integer(5, 50, when=In("model", ["rf", "et"])),
                   "a": Real(0.0, 1.0), "b": Real(0.0, 1.0),
                   "z": Real(1e-3, 1.0, log=True, when=Relation("a", "<", "b")),
                   "s": Real(0.0, 1.0, step=0.25, when=AnyOf(Equals("model", "svm"),
                                                                Between("a", 0.5, None)))})
    labels, configurations = _hyperopt_samples(space, 300, 1)
    # n once per forest; z and s undecided by the choices: sampled flat, read back
    assert labels == {"model", "n[model=0]", "n[model=1]", "a", "b", "z", "s[model=0]",
                      "s[model=1]", "s[model=2]"}
    seen = set()
    for params in configurations:
        assert ("z" in params) == (params["a"] < params["b"])
        assert ("s" in params) == (params["model"] == "svm" or params["a"] >= 0.5)
        seen |= {params.get("s")}
    assert seen == {None, 0.0, 0.25, 0.5, 0.75, 1.0}


def _configspace_reads(space, n=300):
    cs = peers.configspace_of(space, seed=0)
    return cs, [(dict(c), peers._read(space, dict(c), "SMAC3"))
                for c in cs.sample_configuration(n)]


def test_the_configspace_holds_the_conditions_and_forbidden_clauses():
    pytest.importorskip("ConfigSpace")
    for space in (cash_space("regression"), JENATTON_SPACE, FORBIDDEN_1.space):
        cs, reads = _configspace_reads(space)
        conditional = [n for n, d in space.dimensions.items() if d.when is not None]
        assert sorted(cs.conditional_hyperparameters) == sorted(conditional)
        assert len(cs.forbidden_clauses) == len(space.forbidden)
        for raw, params in reads:  # ConfigSpace's activity is mfbo's, and nothing forbidden
            assert set(raw) == set(params) and space.validate(params) == params


def test_the_configspace_unconditions_a_relation_and_reads_it_back():
    pytest.importorskip("ConfigSpace")
    space = Space({"kind": Categorical(["p", "q"]), "a": Real(0.0, 1.0), "b": Real(0.0, 1.0),
                   "z": Real(0.0, 1.0, when=Relation("a", "<", "b")),
                   "y": Integer(1, 5, when=Equals("kind", "q") & Relation("a", ">", "b")),
                   "h": Real(0.0, 1.0, when=Between("a", 0.25, 0.75))},
                  forbidden=[Between("a", 0.9, 1.0), Relation("a", "==", "b")])
    cs, reads = _configspace_reads(space, 500)
    assert sorted(cs.conditional_hyperparameters) == ["h"]
    for raw, params in reads:
        assert "z" in raw and "y" in raw and ("h" in raw) == (0.25 <= raw["a"] <= 0.75)
        assert ("z" in params) == (raw["a"] < raw["b"])
        assert ("y" in params) == (raw["kind"] == "q" and raw["a"] > raw["b"])
        assert list(params) == _active_names(space, params)
        assert space.validate(params) == params  # nothing forbidden


def test_a_peer_that_leaves_out_an_active_parameter_is_named():
    with pytest.raises(ValueError, match="SMAC3 proposed no value for 'x2'"):
        peers._read(JENATTON_SPACE, {"x1": "0", "r8": 0.5}, "SMAC3")


def test_a_failed_evaluation_of_optuna_on_a_flat_space_is_a_failed_trial():
    pytest.importorskip("optuna")

    def fit(p):
        if p["x"] > 0.5:
            raise ValueError("the fit diverged")
        return p["x"]

    flat = ConfigProblem("sometimes-failing", Space({"x": Real(0.0, 1.0)}), None, 0.0, 8,
                         objective=fit)
    run = methods.run_method("optuna", flat, 8, 0)
    assert len(run.values) == 8  # the run went on past its failures
    assert any(v is None for v in run.values) and any(v is not None for v in run.values)

