"""mfbo.from_configspace and mfbo.to_configspace: every hyperparameter type, condition and
forbidden clause maps to what mfbo means by it, so that both sides agree on which parameters
are active and which configurations are forbidden, configuration by configuration (ConfigSpace
samples validate in mfbo; mfbo samples, allowed or not, are judged the same by ConfigSpace);
spaces round-trip; what has no equivalent is refused naming it."""

import sys

import numpy as np
import pytest

import mfbo
from mfbo import (AllOf, AnyOf, Between, Categorical, Equals, Greater, In, Integer, Less,
                  NotEquals, Ordinal, Real, Relation, Space)

CS = pytest.importorskip("ConfigSpace", reason="ConfigSpace is optional: pip install "
                                               "\"mfbo[configspace]\"")
from ConfigSpace.exceptions import ForbiddenValueError  # noqa: E402

from mfbo.integrations import configspace as integration  # noqa: E402


def every_type():
    cs = CS.ConfigurationSpace(seed=0)
    cs.add(CS.Float("lr", (1e-5, 1e-1), log=True),
           CS.Float("frac", (0.0, 1.0)),
           CS.Float("prior", (-1.0, 1.0), distribution=CS.Normal(0.0, 0.1)),  # range only
           CS.Integer("layers", (1, 6)),
           CS.Integer("width", (8, 1024), log=True),
           CS.Integer("beta", (0, 10), distribution=CS.Beta(2, 2)),
           CS.Categorical("act", ["relu", "tanh", 3, 2.5, True], weights=[5, 1, 1, 1, 1]),
           CS.OrdinalHyperparameter("size", ["S", "M", "L", "XL"]),
           CS.OrdinalHyperparameter("batch", [16, 32, 64]),
           CS.Constant("loss", "mse"),
           CS.Constant("seed", 7),
           CS.UnParametrizedHyperparameter("scale", 0.5))
    return cs


def conditional_cs():
    """Every condition kind (nested; NotEquals on an always-active and on a conditional
    parent; comparisons on Integer and Ordinal parents) and every forbidden kind that
    ConfigSpace samples correctly (relations between numbers and with an Ordinal side, clauses
    on parameters that may be inactive)."""
    cs = CS.ConfigurationSpace(seed=1)
    cs.add(CS.Categorical("model", ["svm", "rf", "knn"]),
           CS.Float("lr", (1e-4, 1.0), log=True),
           CS.Float("C", (1e-3, 1e3), log=True),
           CS.Categorical("kernel", ["rbf", "poly", "sigmoid"], default="poly"),
           CS.Integer("degree", (2, 5)),
           CS.Float("gamma", (1e-4, 1.0), log=True),
           CS.Float("coef0", (-1.0, 1.0)),
           CS.Integer("trees", (10, 200)),
           CS.OrdinalHyperparameter("depth", [2, 4, 8, 16]),
           CS.Integer("min_split", (2, 20)),
           CS.Float("leaf", (0.0, 0.5)),
           CS.Integer("k", (1, 30)),
           CS.Categorical("weights", ["uniform", "distance"]),
           CS.Categorical("metric", ["l1", "l2"]),
           CS.Categorical("poly_kind", ["a", "b"]), CS.Float("pk", (0.0, 1.0)),
           CS.Categorical("crit", ["gini", "entropy"]), CS.Float("cx", (0.0, 1.0)),
           CS.Float("tol", (0.0, 1.0)),
           CS.Integer("a1", (1, 5), default=1), CS.Integer("a2", (1, 5), default=2),
           CS.Float("x", (0.0, 1.0)), CS.Float("y", (0.0, 1.0)),
           CS.Constant("scale", 0.5))
    model, kernel, trees, depth, k = (cs[n] for n in ("model", "kernel", "trees", "depth", "k"))
    cs.add(CS.EqualsCondition(cs["C"], model, "svm"),
           CS.EqualsCondition(kernel, model, "svm"),
           CS.EqualsCondition(cs["degree"], kernel, "poly"),
           CS.InCondition(cs["gamma"], kernel, ["rbf", "poly"]),
           CS.NotEqualsCondition(cs["coef0"], kernel, "rbf"),  # active too when kernel is not
           CS.InCondition(trees, model, ["rf"]),
           CS.EqualsCondition(depth, model, "rf"),
           CS.GreaterThanCondition(cs["min_split"], depth, 4),
           CS.LessThanCondition(cs["leaf"], trees, 100),
           CS.EqualsCondition(k, model, "knn"),
           CS.AndConjunction(CS.EqualsCondition(cs["weights"], model, "knn"),
                             CS.GreaterThanCondition(cs["weights"], k, 5)),
           CS.OrConjunction(CS.EqualsCondition(cs["metric"], model, "knn"),
                            CS.AndConjunction(CS.EqualsCondition(cs["metric"], depth, 16),
                                              CS.GreaterThanCondition(cs["metric"], trees,
                                                                      150))),
           CS.OrConjunction(CS.AndConjunction(CS.EqualsCondition(cs["poly_kind"], kernel, "poly"),
                                              CS.GreaterThanCondition(cs["poly_kind"], cs["C"],
                                                                      0.5)),
                            CS.EqualsCondition(cs["poly_kind"], kernel, "sigmoid")),
           # NotEquals on a parent whose own condition reads conditional parents (ConfigSpace
           # builds its default configuration on values, where NotEquals does not hold with
           # the parent inactive: the default activates poly_kind)
           CS.NotEqualsCondition(cs["pk"], cs["poly_kind"], "a"),
           CS.LessThanCondition(cs["crit"], cs["a1"], 3),
           CS.NotEqualsCondition(cs["cx"], cs["crit"], "gini"),
           CS.NotEqualsCondition(cs["tol"], model, "rf"))
    cs.add(CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(kernel, "poly"),
                                      CS.ForbiddenEqualsClause(cs["degree"], 5)),
           CS.ForbiddenAndConjunction(CS.ForbiddenInClause(depth, [16]),
                                      CS.ForbiddenGreaterThanClause(trees, 190)),
           CS.ForbiddenEqualsRelation(cs["a1"], cs["a2"]),
           CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(model, "knn"),
                                      CS.ForbiddenLessThanClause(k, 3)),
           CS.ForbiddenOrConjunction(
               CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(kernel, "sigmoid"),
                                          CS.ForbiddenGreaterThanClause(cs["coef0"], 0.5)),
               CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(cs["weights"], "distance"),
                                          CS.ForbiddenLessThanRelation(k, cs["a1"]))),
           CS.ForbiddenGreaterThanRelation(cs["degree"], k),  # never both active
           CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(model, "rf"),
                                      CS.ForbiddenLessThanRelation(cs["x"], cs["y"])),
           CS.ForbiddenLessThanRelation(depth, cs["a1"]),  # an Ordinal's values vs numbers
           CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(cs["tol"], 0.25),
                                      CS.ForbiddenEqualsClause(model, "svm")))
    return cs


def mfbo_space():
    """Every mfbo dimension, condition and forbidden kind, including those ConfigSpace has no
    word for (Between, bounds outside the range or between an integer's values, NotEquals on a
    conditional parent, NotEquals and != in forbidden, conditions on stepped dimensions; for
    NotEquals on a number, see :func:`numeric_not_equals_space`)."""
    return Space({
        "m": ["a", "b", "c"],
        "r": Real(0.0, 10.0),
        "i": Integer(0, 20),
        "ls": Real(1e-3, 1.0, log=True),
        "st": Real(0.0, 1.0, step=0.25),
        "si": Integer(0, 50, step=10, when={"m": ["a", "b"]}),
        "o": Ordinal(["lo", "mid", "hi"]),
        "k": Categorical(["only"]),
        "c1": Real(0.0, 1.0, when=Equals("m", "a")),
        "c2": Categorical(["p", "q", "r"], when=NotEquals("m", "c")),
        "c3": Real(0.0, 1.0, when=NotEquals("c2", "p")),
        "c4": Integer(1, 9, when=Less("r", 5.0)),
        "c5": Real(0.0, 1.0, when=Greater("i", 7)),
        "c6": Real(0.0, 1.0, when=Between("r", 2.5, 7.5)),
        "c7": Real(0.0, 1.0, when=Between("i", 3, None)),
        "c8": Real(0.0, 1.0, when=Less("i", 4.5)),
        "c9": Real(0.0, 1.0, when=AllOf(Equals("m", "b"),
                                         AnyOf(Less("st", 0.5), Equals("o", "hi")))),
        "c10": Real(0.0, 1.0, when=Greater("si", 15)),
        "c13": Real(0.0, 1.0, when=Less("r", 100.0)),  # whenever r is active: always
        "c14": Real(0.0, 1.0, when=Between("ls", None, 0.1)),
        "c15": Real(0.0, 1.0, when=Greater("i", -3.5) & Less("i", 2.5)),
        "c16": Real(0.0, 1.0, when=Between("st", 0.3, 0.8)),
        "c17": Real(0.0, 1.0, when=In("o", ["lo", "hi"])),
        "c18": Real(0.0, 1.0, when=Between("st", 0.5, None)),
    }, forbidden=[
        {"m": "c", "o": "lo"},
        In("c2", ["q"]) & Greater("c3", 0.9),
        Relation("r", "<", "i") & Equals("m", "b"),
        Relation("st", ">=", "ls") & Equals("o", "mid"),
        Relation("i", "!=", "c4") & Equals("m", "a"),
        AnyOf(Equals("o", "mid") & Less("r", 1.0), Between("ls", 0.5, None)),
        NotEquals("o", "hi") & Greater("r", 9.0),
        NotEquals("c2", "r") & Equals("k", "only") & Less("c1", 0.1),
        Between("si", 20, 30) & Equals("m", "b"),
        Less("i", -1),  # never holds: forbids nothing
        Relation("c5", "<=", "c6") & Relation("i", "==", "c4") & Relation("r", ">", "c6"),
    ])


def numeric_not_equals_space():
    """NotEquals on a Real or Integer parent, always active or conditional, in ``when=`` and in
    ``forbidden=``."""
    return Space({"i": Integer(0, 20), "r": Real(0.0, 1.0),
                  "c4": Integer(1, 9, when=Less("r", 0.5)),
                  "c11": Real(0.0, 1.0, when=NotEquals("i", 10)),
                  "c12": Real(0.0, 1.0, when=NotEquals("c4", 5)),
                  "c7": Integer(0, 4, when=NotEquals("r", 0.5))},
                 forbidden=[NotEquals("c7", 2) & Greater("r", 0.8)])


def same(a, b):
    """Whether spaces ``a`` and ``b`` are the same but for the order of their forbidden
    conditions (ConfigSpace sorts its clauses)."""
    return a.dimensions == b.dimensions and sorted(map(repr, a.forbidden)) == \
        sorted(map(repr, b.forbidden))


def _plain(params):
    return {k: v.item() if isinstance(v, np.generic) else v for k, v in params.items()}


def agree(cs, space, n=300, seed=0, configspace_samples=True):
    """Both sides accept the same configurations with the same active parameters: each of
    ``n`` ConfigSpace samples validates in mfbo; each allowed mfbo sample is a Configuration
    of ``cs`` with the same keys; of ``n`` mfbo configurations drawn at random without
    regard to the forbidden conditions, ConfigSpace refuses as forbidden exactly those mfbo
    forbids (and refuses none for a wrong active set).  Returns how many of those were
    forbidden."""
    if configspace_samples:
        for config in cs.sample_configuration(n):
            params = _plain(dict(config))
            assert set(space.validate(params)) == set(params)
    rng = np.random.default_rng(seed)
    for params in space.from_unit(space.sample(n, rng)):
        config = CS.Configuration(cs, values=params)
        assert set(config.keys()) == set(params)
    forbidden = 0
    for params in space.from_unit(rng.random((n, len(space)))):
        mfbo_says = any(f.holds(params) for f in space.forbidden)
        try:
            CS.Configuration(cs, values=params)
            configspace_says = False
        except ForbiddenValueError:
            configspace_says = True
        assert mfbo_says == configspace_says, params
        forbidden += mfbo_says
    return forbidden


# -- ConfigSpace -> mfbo ---------------------------------------------------------------------------
def test_each_hyperparameter_type_becomes_its_dimension():
    s = mfbo.from_configspace(every_type())
    d = s.dimensions
    assert d["lr"] == Real(1e-5, 1e-1, log=True) and d["frac"] == Real(0.0, 1.0)
    assert d["prior"] == Real(-1.0, 1.0)
    assert d["layers"] == Integer(1, 6) and d["width"] == Integer(8, 1024, log=True)
    assert d["beta"] == Integer(0, 10)
    assert d["act"] == Categorical(["relu", "tanh", 3, 2.5, True])
    assert d["size"] == Ordinal(["S", "M", "L", "XL"]) and isinstance(d["batch"], Ordinal)
    assert d["loss"] == Categorical(["mse"]) and d["seed"] == Categorical([7])
    assert d["scale"] == Categorical([0.5])
    assert s.levels[s.names.index("size")] == 4  # ordered: local search steps to neighbours
    assert Space.from_json(s.to_json()) == s


def test_conditions_and_forbidden_clauses_map_to_mfbo_ones():
    s = mfbo.from_configspace(conditional_cs())
    d = s.dimensions
    assert d["C"].when == Equals("model", "svm")
    assert d["degree"].when == Equals("kernel", "poly")
    assert d["gamma"].when == In("kernel", ["rbf", "poly"])
    # NotEquals on a conditional parent also holds where the parent is inactive
    assert d["coef0"].when == AnyOf(NotEquals("kernel", "rbf"), NotEquals("model", "svm"))
    assert d["tol"].when == NotEquals("model", "rf")  # an always-active parent: as it is
    assert d["min_split"].when == In("depth", [8, 16])  # > 4 on an Ordinal: the values after
    assert d["leaf"].when == Less("trees", 100)
    assert d["weights"].when == AllOf(Equals("model", "knn"), Greater("k", 5))
    assert d["metric"].when == AnyOf(Equals("model", "knn"),
                                     AllOf(Equals("depth", 16), Greater("trees", 150)))
    # or poly_kind inactive: neither (kernel poly and C > 0.5) nor kernel sigmoid, kernel
    # and C inactive where model != svm
    not_svm = NotEquals("model", "svm")
    assert d["pk"].when == AnyOf(
        NotEquals("poly_kind", "a"),
        AllOf(AnyOf(NotEquals("kernel", "poly"), not_svm, Between("C", None, 0.5)),
              AnyOf(NotEquals("kernel", "sigmoid"), not_svm)))
    assert d["cx"].when == AnyOf(NotEquals("crit", "gini"), Between("a1", 3, None))
    forbidden = set(map(repr, s.forbidden))
    assert repr(AllOf(Equals("kernel", "poly"), Equals("degree", 5))) in forbidden
    assert repr(AllOf(In("depth", [16]), Greater("trees", 190))) in forbidden
    assert repr(Relation("a1", "==", "a2")) in forbidden
    assert repr(Relation("degree", ">", "k")) in forbidden
    # depth < a1 spelled out over depth's values (those below a1's top, 5)
    assert repr(AnyOf(AllOf(Equals("depth", 2), Greater("a1", 2)),
                      AllOf(Equals("depth", 4), Greater("a1", 4)),
                      AllOf(Equals("depth", 8), Greater("a1", 8)),
                      AllOf(Equals("depth", 16), Greater("a1", 16)))) in forbidden
    assert len(s.forbidden) == len(conditional_cs().forbidden_clauses)


def test_configspace_and_mfbo_agree_on_active_and_forbidden_configurations():
    cs = conditional_cs()
    space = mfbo.from_configspace(cs)
    forbidden = agree(cs, space, n=400)
    assert 20 < forbidden < 300  # the forbidden clauses were exercised, both ways
    # and back to ConfigSpace: not the same conditions and clauses, the same configurations
    again = mfbo.to_configspace(space)
    assert again != cs
    agree(again, space, n=200)
    # every branch came up: each conditional parameter active and inactive somewhere
    active = space.active(space.sample(400, np.random.default_rng(1)))
    assert active.any(axis=0).all()
    assert list((~active).any(axis=0)) == [d.when is not None for d in space.dimensions.values()]


def test_not_equals_on_an_inactive_parent_holds_as_in_configspace():
    cs = CS.ConfigurationSpace({"a": ["x", "y"], "b": ["u", "v"], "c": (0.0, 1.0)})
    cs.add(CS.EqualsCondition(cs["b"], cs["a"], "x"), CS.NotEqualsCondition(cs["c"], cs["b"], "u"))
    s = mfbo.from_configspace(cs)
    for params, c_active in [({"a": "y", "c": 0.5}, True), ({"a": "x", "b": "u"}, False),
                             ({"a": "x", "b": "v", "c": 0.5}, True)]:
        CS.Configuration(cs, values=params)
        assert s.validate(params) == params
        assert ("c" in cs.get_active_hyperparameters(CS.Configuration(cs, values=params))) \
            == c_active
    for params in ({"a": "y"}, {"a": "x", "b": "u", "c": 0.5}):
        with pytest.raises(ValueError):
            CS.Configuration(cs, values=params)
        with pytest.raises(ValueError):
            s.validate(params)


def test_less_or_equal_and_greater_or_equal_clauses_match_configspace_value_by_value(capsys):
    # (ConfigSpace 1.2 samples the complement of a <= clause and prints in a >= one's check,
    # so these are compared on every configuration rather than on ConfigSpace's samples)
    cs = CS.ConfigurationSpace({"n": (0, 10), "o": CS.OrdinalHyperparameter("o", [1, 5, 9]),
                                "f": (0.0, 1.0)})
    cs.add(CS.ForbiddenLessThanEqualsClause(cs["n"], 2),
           CS.ForbiddenAndConjunction(CS.ForbiddenGreaterThanEqualsClause(cs["o"], 5),
                                      CS.ForbiddenGreaterThanEqualsClause(cs["n"], 9)),
           CS.ForbiddenAndConjunction(CS.ForbiddenLessThanEqualsClause(cs["f"], 0.5),
                                      CS.ForbiddenEqualsClause(cs["n"], 4)))
    s = mfbo.from_configspace(cs)
    assert Between("n", None, 2) in s.forbidden
    assert AllOf(In("o", [5, 9]), Between("n", 9, None)) in s.forbidden
    refused = 0
    for n in range(11):
        for o in (1, 5, 9):
            for f in (0.0, 0.5, 0.5000001, 1.0):
                params = {"n": n, "o": o, "f": f}
                try:
                    CS.Configuration(cs, values=params)
                    ok = True
                except ForbiddenValueError:
                    ok = False
                assert ok == (not any(c.holds(params) for c in s.forbidden)), params
                refused += not ok
    assert refused == 3 * 3 * 4 + 2 * 2 * 4 + 3 * 2
    capsys.readouterr()


def test_relations_with_categorical_sides_are_spelled_out_over_their_values():
    cs = CS.ConfigurationSpace({"a": ["u", "v", "w"], "b": ["v", "w", "z"],
                                "o": CS.OrdinalHyperparameter("o", [3, 1, 5]), "x": (0.0, 4.0)})
    cs.add(CS.ForbiddenEqualsRelation(cs["a"], cs["b"]),
           CS.ForbiddenGreaterThanEqualsRelation(cs["x"], cs["o"]))
    s = mfbo.from_configspace(cs)
    assert AnyOf(AllOf(Equals("a", "v"), In("b", ["v"])),
                 AllOf(Equals("a", "w"), In("b", ["w"]))) in s.forbidden
    assert 50 < agree(cs, s, n=300, configspace_samples=False)
    agree(cs, s, n=100)


def test_dimensions_are_ordered_parents_first():
    # the child is added first and sorts first by name: mfbo still lists its parents before it
    cs = CS.ConfigurationSpace()
    cs.add(CS.Float("a_child", (0.0, 1.0)), CS.Categorical("m_mid", ["p", "q"]),
           CS.Categorical("z_top", ["on", "off"]))
    cs.add(CS.AndConjunction(CS.EqualsCondition(cs["a_child"], cs["m_mid"], "p"),
                             CS.EqualsCondition(cs["a_child"], cs["z_top"], "on")),
           CS.EqualsCondition(cs["m_mid"], cs["z_top"], "on"))
    s = mfbo.from_configspace(cs)
    assert s.names == ["z_top", "m_mid", "a_child"]
    agree(cs, s, n=50)
    # whatever order it is given (ConfigSpace's is by depth already)
    assert integration.topological(["c", "b", "d", "a"], {"c": ["b", "d"], "b": ["a"]}) == \
        ["a", "b", "d", "c"]
    assert integration.topological(["x", "y"], {}) == ["x", "y"]


def test_proposed_parameters_are_valid_configurations_of_a_conditional_space():
    cs = conditional_cs()
    opt = mfbo.Optimizer(mfbo.from_configspace(cs), random_state=0, n_initial=6)
    models = set()
    for _ in range(14):  # past the initial design: the model's proposals too
        t = opt.ask()
        config = CS.Configuration(cs, values=t.params)
        assert set(config.keys()) == set(t.params)
        models.add(t.params["model"])
        opt.tell(t, t.params["x"] + t.params.get("C", 0.0) * 1e-3)
    assert len(models) > 1


@pytest.mark.parametrize("surrogate", ["mondrian", "random"])
def test_proposed_parameters_are_valid_configurations(surrogate):
    cs = every_type()
    opt = mfbo.Optimizer(mfbo.from_configspace(cs), surrogate=surrogate, random_state=0,
                         n_initial=6)
    seen = set()
    for _ in range(16):  # past the initial design: the model's proposals too
        t = opt.ask()
        config = CS.Configuration(cs, values=t.params)
        config.check_valid_configuration()
        # ConfigSpace keeps floats to 13 significant digits; everything else is the same value
        floats = ("lr", "frac", "prior")
        assert [config[k] for k in floats] == pytest.approx([t.params[k] for k in floats])
        assert {k: v for k, v in config.items() if k not in floats} == \
            {k: v for k, v in t.params.items() if k not in floats}
        assert t.params["loss"] == "mse" and t.params["seed"] == 7 and t.params["scale"] == 0.5
        seen.add(t.params["size"])
        opt.tell(t, t.params["frac"] + ["S", "M", "L", "XL"].index(t.params["size"]))
    assert seen <= {"S", "M", "L", "XL"} and len(seen) > 1


def test_minimize_over_a_configspace_space():
    cs = CS.ConfigurationSpace({"x": (-2.0, 2.0), "k": (1, 4), "c": ["a", "b"]})
    r = mfbo.minimize(lambda x, k, c: x * x + k + (c == "b"), mfbo.from_configspace(cs),
                      n_calls=12, random_state=0, progress_bar=False)
    CS.Configuration(cs, values=r.best_params).check_valid_configuration()


def test_what_from_configspace_cannot_honour_is_refused_with_its_name():
    cs = CS.ConfigurationSpace({"clf:C": (0.1, 1.0)})
    with pytest.raises(ValueError, match="'clf:C'.*identifier"):
        mfbo.from_configspace(cs)
    cs = CS.ConfigurationSpace()
    cs.add(CS.Categorical("shape", [(1, 2), (3, 4)]))
    with pytest.raises(TypeError, match="hyperparameter 'shape'"):
        mfbo.from_configspace(cs)
    with pytest.raises(TypeError, match="cs must be a ConfigSpace ConfigurationSpace"):
        mfbo.from_configspace({"x": (0.0, 1.0)})
    with pytest.raises(ValueError, match="no hyperparameters"):
        mfbo.from_configspace(CS.ConfigurationSpace())

    class Mine(CS.EqualsCondition):  # a kind from_configspace does not know
        pass

    class MineToo(CS.ForbiddenEqualsClause):
        pass

    cs = CS.ConfigurationSpace({"a": ["x", "y"], "b": (0.0, 1.0)})
    cs.add(Mine(cs["b"], cs["a"], "x"))
    with pytest.raises(TypeError, match=r"condition b \| a == 'x' is a Mine"):
        mfbo.from_configspace(cs)
    cs = CS.ConfigurationSpace({"a": ["x", "y"], "b": (0.0, 1.0)})
    cs.add(MineToo(cs["a"], "y"))
    with pytest.raises(TypeError, match="forbidden clause Forbidden: a == 'y' is a MineToo"):
        mfbo.from_configspace(cs)
    # a condition that never holds: the child would never be active
    cs = CS.ConfigurationSpace({"o": CS.OrdinalHyperparameter("o", [1, 2]), "b": (0.0, 1.0)})
    cs.add(CS.LessThanCondition(cs["b"], cs["o"], 1))
    with pytest.raises(ValueError, match="'b' is never active"):
        mfbo.from_configspace(cs)


def test_a_forbidden_clause_that_never_holds_is_left_out():
    cs = CS.ConfigurationSpace({"o": CS.OrdinalHyperparameter("o", [1, 2]), "b": (0.0, 1.0)})
    cs.add(CS.ForbiddenLessThanClause(cs["o"], 1),
           CS.ForbiddenOrConjunction(CS.ForbiddenLessThanClause(cs["o"], 1),
                                     CS.ForbiddenGreaterThanClause(cs["b"], 0.9)))
    s = mfbo.from_configspace(cs)
    assert s.forbidden == (Greater("b", 0.9),)
    agree(cs, s, n=100)


# -- mfbo -> ConfigSpace ---------------------------------------------------------------------------
def test_to_configspace_maps_every_kind_exactly():
    space = mfbo_space()
    cs = mfbo.to_configspace(space, seed=0)
    assert mfbo.to_configspace is integration.to_configspace  # (the lazy export)
    assert isinstance(cs["st"], CS.OrdinalHyperparameter)
    assert list(cs["st"].sequence) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert list(cs["si"].sequence) == [0, 10, 20, 30, 40, 50]
    assert isinstance(cs["k"], CS.Constant) and isinstance(cs["o"], CS.OrdinalHyperparameter)
    assert len(cs.forbidden_clauses) == len(space.forbidden) - 1  # (Less("i", -1) left out)
    forbidden = agree(cs, space, n=400)
    assert 30 < forbidden < 390  # both outcomes, many times
    back = mfbo.from_configspace(cs)  # not the same conditions, but the same configurations
    assert set(back.names) == set(space.names)
    agree(cs, back, n=200)


def test_to_configspace_writes_what_configspace_refuses_with_comparisons_it_takes():
    cs = mfbo.to_configspace(mfbo_space())
    assert str(cs.conditions[[c.child.name for c in cs.conditions].index("c8")]) == "c8 | i < 5"
    by_child = {c.child.name: str(c) for c in cs.conditions}
    assert by_child["c6"] == "((c6 | r > 2.5 || c6 | r == 2.5) && (c6 | r < 7.5 || c6 | r == 7.5))"
    assert by_child["c7"] == "c7 | i > 2"
    assert by_child["c3"] == "c3 | c2 in {'q', 'r'}"  # c2 is conditional: not NotEquals
    assert by_child["c13"] == "(c13 | r > 0.0 || c13 | r == 0.0)"  # r active
    # > -3.5 holds for every value of i: i active
    assert by_child["c15"] == "((c15 | i > 0 || c15 | i == 0) && c15 | i < 3)"
    assert by_child["c16"] == "c16 | st in {0.5, 0.75}"
    assert by_child["c10"] == "c10 | si in {20, 30, 40, 50}"
    assert by_child["c18"] == "c18 | st in {0.5, 0.75, 1.0}"


def test_not_equals_on_a_number_maps_to_configspace():
    cs = mfbo.to_configspace(numeric_not_equals_space())
    by_child = {c.child.name: str(c) for c in cs.conditions}
    assert by_child["c11"] == "c11 | i != 10"  # i is always active: NotEquals
    assert by_child["c12"] == "(c12 | c4 < 5 || c12 | c4 > 5)"  # c4 is not
    assert [str(f) for f in cs.forbidden_clauses] == [
        "((Forbidden: c7 < 2 || Forbidden: c7 > 2) && Forbidden: r > 0.8)"]


def test_not_equals_on_a_number_agrees_with_configspace():
    space = numeric_not_equals_space()
    agree(mfbo.to_configspace(space), space, n=200)


def test_round_trips():
    space = Space({
        "m": ["a", "b", "c"], "t": Categorical([True, False, None]), "k": Categorical([3]),
        "r": Real(-1.0, 1.0), "lr": Real(1e-4, 1.0, log=True), "n": Integer(1, 100, log=True),
        "i": Integer(0, 10), "st": Real(0.5, 2.0, step=0.5), "si": Integer(-5, 5, step=5),
        "o": Ordinal(["S", "M", "L"]),
        "c1": Real(0.0, 1.0, when={"m": "a"}), "c2": Integer(0, 3, when={"m": ["b", "c"]}),
        "c3": Real(0.0, 1.0, when=NotEquals("m", "a")), "c4": Real(0.0, 1.0, when=Less("r", 0.5)),
        "c5": Real(0.0, 1.0, when=Greater("i", 3) | Equals("c2", 2)),
        "c6": Ordinal([1, 2], when=AllOf(Equals("t", None), In("o", ["S", "L"]), Less("st", 1.5))),
        "c7": Real(0.0, 1.0, when=Greater("si", -5) & NotEquals("t", True)),
    }, forbidden=[{"m": "b", "o": "S"}, In("t", [True, False]) & Greater("lr", 0.5),
                  Less("c1", 0.1), Relation("r", "==", "i"), Relation("r", "<", "c4"),
                  Relation("st", ">", "i") & Equals("m", "c"), Relation("c1", "<=", "r"),
                  AnyOf(Relation("n", ">=", "i"), Greater("si", 0)) & Equals("o", "M")])
    cs = mfbo.to_configspace(space)
    assert same(mfbo.from_configspace(cs), space)
    agree(cs, space, n=200)
    # and a ConfigurationSpace written with those kinds (ConfigSpace's own defaults) comes back
    # the same
    cs = CS.ConfigurationSpace(seed=1)
    cs.add(CS.Categorical("model", ["svm", "rf"]), CS.Float("C", (1e-3, 1e3), log=True),
           CS.Integer("trees", (10, 200)), CS.Float("leaf", (0.0, 0.5)),
           CS.Categorical("kernel", ["rbf", "poly"]), CS.Integer("a", (1, 5)),
           CS.OrdinalHyperparameter("size", ["S", "M", "L"]), CS.Constant("c", "x"))
    cs.add(CS.EqualsCondition(cs["C"], cs["model"], "svm"),
           CS.InCondition(cs["trees"], cs["model"], ["rf"]),
           CS.OrConjunction(CS.LessThanCondition(cs["leaf"], cs["trees"], 100),
                            CS.AndConjunction(CS.GreaterThanCondition(cs["leaf"], cs["C"], 1.0),
                                              CS.NotEqualsCondition(cs["leaf"], cs["a"], 2))),
           CS.NotEqualsCondition(cs["kernel"], cs["model"], "rf"))
    cs.add(CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(cs["kernel"], "poly"),
                                      CS.ForbiddenInClause(cs["size"], ["S", "L"])),
           CS.ForbiddenOrConjunction(CS.ForbiddenGreaterThanClause(cs["trees"], 190),
                                     CS.ForbiddenLessThanClause(cs["leaf"], 0.01)),
           CS.ForbiddenGreaterThanRelation(cs["a"], cs["trees"]),
           CS.ForbiddenEqualsRelation(cs["leaf"], cs["C"]))
    assert mfbo.to_configspace(mfbo.from_configspace(cs), seed=1) == cs


def test_a_forbidden_default_is_replaced_by_an_allowed_configuration():
    space = Space({"a": ["x", "y"], "n": Integer(0, 10)}, forbidden=[{"a": "x"}, Less("n", 5)])
    cs = mfbo.to_configspace(space)  # ConfigSpace's own defaults would be a = x, n = 5
    default = dict(cs.get_default_configuration())
    assert default["a"] == "y" and default["n"] >= 5
    space = Space({"a": ["x", "y"], "n": Integer(0, 10)}, forbidden=[Less("n", 5)])
    assert dict(mfbo.to_configspace(space).get_default_configuration()) == {"a": "x", "n": 5}


def test_what_to_configspace_cannot_express_is_refused_with_its_name():
    with pytest.raises(ValueError, match=r"condition Relation\('x', '<', 'y'\) of 'z' compares "
                                         r"two dimensions"):
        mfbo.to_configspace({"x": (0.0, 1.0), "y": (0.0, 1.0),
                             "z": Real(0.0, 1.0, when=Relation("x", "<", "y"))})
    with pytest.raises(ValueError, match=r"Less\('n', 0\) of 'z' never holds"):
        mfbo.to_configspace({"n": (0, 5), "z": Real(0.0, 1.0, when=Less("n", 0))})
    with pytest.raises(ValueError, match=r"forbidden\[1\] = .*Relation\('a', '!=', 'b'\).*no "
                                         r"forbidden != relation"):
        mfbo.to_configspace(Space({"a": ["u", "v"], "b": ["u", "v"]},
                                  forbidden=[{"a": "u", "b": "u"}, Relation("a", "!=", "b")]))
    with pytest.raises(ValueError, match="dimension 'c' .* cannot be a ConfigSpace"):
        mfbo.to_configspace({"c": Categorical([1, True])})  # one choice to ConfigSpace
    with pytest.raises(ValueError, match="dimension 'n' .* more than 10000 values"):
        mfbo.to_configspace({"n": Integer(0, 10 ** 6, step=2)})


def test_a_configspace_without_a_clause_to_use_is_named(monkeypatch):
    monkeypatch.delattr(CS, "ForbiddenOrConjunction")  # as in ConfigSpace 1.0
    space = Space({"a": ["u", "v"], "x": (0.0, 1.0)}, forbidden=[Equals("a", "u") | Less("x", 0.1)])
    with pytest.raises(ValueError, match=r"forbidden\[0\] = AnyOf.* needs ConfigSpace's "
                                         r"ForbiddenOrConjunction.*>= 1.2"):
        mfbo.to_configspace(space)


def test_a_missing_configspace_gives_an_install_hint(monkeypatch):
    cs = CS.ConfigurationSpace({"x": (0.0, 1.0)})
    monkeypatch.setitem(sys.modules, "ConfigSpace", None)  # import ConfigSpace now fails
    hint = r"pip install \"mfbo\[configspace\]\""
    with pytest.raises(ImportError, match="from_configspace .*" + hint):
        mfbo.from_configspace(cs)
    with pytest.raises(ImportError, match="to_configspace .*" + hint):
        mfbo.to_configspace({"x": (0.0, 1.0)})
