"""mfbo.from_configspace: every hyperparameter type round-trips (the proposed parameters are
valid configurations of the ConfigurationSpace); conditions and forbidden clauses are refused."""

import sys

import pytest

import mfbo
from mfbo import Categorical, Integer, Ordinal, Real, Space

CS = pytest.importorskip("ConfigSpace", reason="ConfigSpace is optional: pip install "
                                               "\"mfbo[configspace]\"")


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


def test_conditions_are_refused_naming_the_hyperparameter():
    cs = CS.ConfigurationSpace({"kernel": ["rbf", "poly"], "degree": (2, 5), "C": (0.1, 10.0)})
    cs.add(CS.EqualsCondition(cs["degree"], cs["kernel"], "poly"))
    with pytest.raises(ValueError, match=r"condition.*\['degree'\].*degree \| kernel == 'poly'"):
        mfbo.from_configspace(cs)
    cs = CS.ConfigurationSpace({"a": ["x", "y"], "b": ["u", "v"], "c": (0.0, 1.0)})
    cs.add(CS.AndConjunction(CS.EqualsCondition(cs["c"], cs["a"], "x"),
                             CS.EqualsCondition(cs["c"], cs["b"], "u")))
    with pytest.raises(ValueError, match=r"\['c'\]"):
        mfbo.from_configspace(cs)


def test_forbidden_clauses_are_refused_naming_the_clause():
    cs = CS.ConfigurationSpace({"penalty": ["l1", "l2"], "dual": [False, True]})
    cs.add(CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(cs["penalty"], "l1"),
                                      CS.ForbiddenEqualsClause(cs["dual"], True)))
    with pytest.raises(ValueError, match="forbidden clause.*penalty"):
        mfbo.from_configspace(cs)


def test_what_has_no_mfbo_dimension_is_refused_with_its_name():
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


def test_a_missing_configspace_gives_an_install_hint(monkeypatch):
    cs = CS.ConfigurationSpace({"x": (0.0, 1.0)})
    monkeypatch.setitem(sys.modules, "ConfigSpace", None)  # import ConfigSpace now fails
    with pytest.raises(ImportError, match=r"pip install \"mfbo\[configspace\]\""):
        mfbo.from_configspace(cs)
