"""MondrianSampler on define-by-run conditional objectives: the conditions inferred from a
study's history (mfbo.integrations.optuna.structure), exactly, rule by rule and kept up to date
incrementally; a CASH-like study whose every conditional parameter the optimizer proposes once
the startup trials are done; trials told as they ran when the objective's branch disagrees
with the proposal, with enqueued values, several samplers sharing a storage, threads, and
after pickling.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import pickle

import numpy as np
import pytest

optuna = pytest.importorskip("optuna", reason="optuna is optional: pip install \"mfbo[optuna]\"")

from optuna.distributions import CategoricalDistribution as Cat  # noqa: E402
from optuna.distributions import FloatDistribution as Float  # noqa: E402
from optuna.distributions import IntDistribution as Int  # noqa: E402
from optuna.trial import TrialState  # noqa: E402

from mfbo import (AllOf, Between, Categorical, Greater, In, Integer, Less, Ordinal,  # noqa: E402
                  Real, Space)
from mfbo.integrations.optuna import MondrianSampler, from_optuna  # noqa: E402
from mfbo.integrations.optuna import sampler as sampler_module  # noqa: E402
from mfbo.integrations.optuna import structure as structure_module  # noqa: E402
from mfbo.integrations.optuna.structure import (ConditionalSearchSpace, Structure,  # noqa: E402
                                                infer_structure)

optuna.logging.set_verbosity(optuna.logging.WARNING)

DISTS = {"model": Cat(["svm", "rf", "knn"]), "C": Float(1e-3, 1e3, log=True),
         "kernel": Cat(["rbf", "poly"]), "degree": Int(2, 5), "trees": Int(10, 500, step=10),
         "n_layers": Int(1, 3), "units_1": Int(4, 64, log=True), "units_2": Int(4, 64, log=True),
         "opt": Cat(["sgd", "adam"]), "nesterov": Cat([True, False]), "momentum": Float(0, 1),
         "noise": Float(0, 1), "fixed": Cat(["only"])}
LR = [Float(1e-4, 1e-1, log=True), Float(1e-5, 1e-1, log=True)]


def history() -> list:
    """72 complete trials, every combination of model, kernel, n_layers, opt and nesterov, with
    the parameters a define-by-run objective asks for, in its order: C and kernel for the svm,
    degree for its poly kernel, trees for the rf, units_j for j < n_layers, momentum for sgd
    with nesterov; noise in every fifth trial (nothing explains that), lr whose range changes
    half-way, and a single-valued parameter."""
    trials = []
    for i, (m, k, n, o, nv) in enumerate(itertools.product(range(3), range(2), range(1, 4),
                                                           range(2), range(2))):
        p = {"model": ["svm", "rf", "knn"][m]}
        if m == 0:
            p["C"], p["kernel"] = 10.0 ** (i % 7 - 3), ["rbf", "poly"][k]
            if k == 1:
                p["degree"] = 2 + i % 4
        elif m == 1:
            p["trees"] = 10 * (1 + i % 50)
        p["n_layers"] = n
        for j in range(1, n):
            p[f"units_{j}"] = 4 + i % 60
        p["opt"], p["nesterov"] = ["sgd", "adam"][o], [True, False][nv]
        if o == 0 and nv == 0:
            p["momentum"] = (i % 10) / 10
        if i % 5 == 0:
            p["noise"] = 0.5
        p["lr"], p["fixed"] = 1e-3, "only"
        dists = {name: DISTS.get(name, LR[i >= 36]) for name in p}
        trials.append(optuna.trial.create_trial(params=p, distributions=dists, value=float(i)))
    return trials


#: the conditions of :func:`history`, on coded values (a choice's index, a grid's index)
EXPECTED = {"model": None, "C": In("model", [0]), "kernel": In("model", [0]), "n_layers": None,
            "opt": None, "nesterov": None,
            "momentum": AllOf(In("opt", [0]), In("nesterov", [0])),
            "units_1": Greater("n_layers", 1), "units_2": Greater("n_layers", 2),
            "degree": In("kernel", [1]), "trees": In("model", [1])}


def study_of(trials, **kwargs):
    study = optuna.create_study(sampler=make(**kwargs))
    study.add_trials(trials)
    return study


def make(**kwargs) -> MondrianSampler:
    kwargs.setdefault("seed", 0)
    kwargs.setdefault("n_random_candidates", 200)
    return MondrianSampler(**kwargs)


def relative_sample(study):
    """What optuna does when a trial starts: infer the search space, sample relative to it."""
    sampler = study.sampler
    trial = study._storage.get_trial(study._storage.create_new_trial(study._study_id))
    return sampler.sample_relative(study, trial, sampler.infer_relative_search_space(study, trial))


def test_conditions_inferred_from_a_hand_made_history():
    study = study_of(history())
    structure, first, dists = infer_structure(study.trials)
    assert list(structure.conditions) == list(EXPECTED)  # in the order of first appearance
    assert structure.conditions == EXPECTED
    assert structure.distributions == {n: DISTS[n] for n in EXPECTED}
    assert first["degree"] == 12 and first["lr"] == 0 and dists["lr"] is None

    # what the sampler makes of it: the relative search space, and the optimizer's space
    assert study.sampler.infer_relative_search_space(study, None) == \
        {n: DISTS[n] for n in sorted(EXPECTED)}
    params = relative_sample(study)
    keys = {"model": "p0", "C": "p1", "kernel": "p2", "degree": "p3", "opt": "p4",
            "nesterov": "p5", "momentum": "p6", "n_layers": "p7", "trees": "p8",
            "units_1": "p9", "units_2": "p10"}  # sorted, parents first
    assert list(study.sampler._mirror.codecs) == list(keys)
    assert study.sampler._mirror.space == Space({
        "p0": Categorical([0, 1, 2]),
        "p1": Real(1e-3, 1e3, log=True, when=In("p0", [0])),
        "p2": Categorical([0, 1], when=In("p0", [0])),
        "p3": Integer(2, 5, when=In("p2", [1])),
        "p4": Categorical([0, 1]), "p5": Categorical([0, 1]),
        "p6": Real(0.0, 1.0, when=AllOf(In("p4", [0]), In("p5", [0]))),
        "p7": Integer(1, 3),
        "p8": Integer(0, 49, when=In("p0", [1])),
        "p9": Integer(4, 64, log=True, when=Greater("p7", 1)),
        "p10": Integer(4, 64, log=True, when=Greater("p7", 2))})
    # every history trial told; the proposal holds exactly the parameters active under it
    assert study.sampler._mirror.optimizer.n_finished == 72
    assert study.sampler._mirror.encode(params, {}) is not None


def test_from_optuna_warm_starts_the_conditional_space_it_infers():
    opt = from_optuna(study_of(history()), random_state=0)
    assert opt.space == Space({
        "model": Categorical(["svm", "rf", "knn"]),
        "C": Real(1e-3, 1e3, log=True, when=In("model", ["svm"])),
        "kernel": Categorical(["rbf", "poly"], when=In("model", ["svm"])),
        "degree": Integer(2, 5, when=In("kernel", ["poly"])),
        "fixed": Categorical(["only"]),  # single-valued, in every trial
        "opt": Categorical(["sgd", "adam"]), "nesterov": Categorical([True, False]),
        "momentum": Real(0.0, 1.0, when=AllOf(In("opt", ["sgd"]), In("nesterov", [True]))),
        "n_layers": Integer(1, 3),
        "trees": Ordinal(list(range(10, 501, 10)), when=In("model", ["rf"])),
        "units_1": Integer(4, 64, log=True, when=Greater("n_layers", 1)),
        "units_2": Integer(4, 64, log=True, when=Greater("n_layers", 2))})
    # every trial told (noise and lr, outside the space, left out of its parameters)
    assert opt.n_finished == 72
    told = opt.result().trials
    assert told[14].params == {"model": "svm", "C": 1e-3, "kernel": "poly", "degree": 4,
                               "fixed": "only", "opt": "adam", "nesterov": True, "n_layers": 1}
    assert told[17].params["units_1"] == 21 and "units_2" not in told[17].params
    t = opt.ask()
    assert opt.space.validate(t.params) == t.params


def history_of(rows: list[dict], dists: dict, values=None) -> list:
    study = optuna.create_study()
    values = [0.0] * len(rows) if values is None else values
    study.add_trials([optuna.trial.create_trial(params=p, distributions={n: dists[n] for n in p},
                                                value=v) for p, v in zip(rows, values)])
    return study.trials


RULES = {
    # a parent present in exactly the child's trials: the child is active where it is
    "sibling": ([{"n": 1}, {"n": 2, "act": "relu", "drop": "no"},
                 {"n": 3, "act": "tanh", "drop": "yes"}],
                {"n": None, "act": Greater("n", 1), "drop": In("act", [0, 1, 2])}),
    # a pair of categorical parents, and an integer sibling of what they explain
    "pair": ([{"a": "u", "b": "u", "k": 3, "j": 5}, {"a": "u", "b": "v"}, {"a": "v", "b": "u"},
              {"a": "v", "b": "v"}],
             {"a": None, "b": None, "k": AllOf(In("a", [0]), In("b", [0])),
              "j": Between("k", 1, 9)}),
    # an integer parent bounded on both sides
    "between": ([{"n": 1}, {"n": 4, "x": 0.5}, {"n": 5, "x": 0.1}, {"n": 8}],
                {"n": None, "x": AllOf(Greater("n", 1), Less("n", 8))}),
    # a value on both sides, and a parent absent where the child is present: unexplained
    "unexplained": ([{"m": "a", "x": 0.1}, {"m": "a"}, {"m": "b"}],
                    {"m": None}),
    "parent absent": ([{"m": "a", "z": "a", "x": 0.1}, {"m": "b", "x": 0.2}, {"m": "c"}],
                      {"m": None, "z": In("m", [0]), "x": In("m", [0, 1])}),
    # an integer explains only where no categorical does
    "choice first": ([{"n": 1, "m": "a"}, {"n": 2, "m": "b", "x": 0.1}],
                     {"n": None, "m": None, "x": In("m", [1])}),
}
RULE_DISTS = {"n": Int(1, 8), "act": Cat(["relu", "tanh", "elu"]), "drop": Cat(["no", "yes"]),
              "m": Cat(["a", "b", "c"]), "k": Int(1, 9), "j": Int(1, 9), "x": Float(0, 1),
              "z": Cat(["a", "b"]), "a": Cat(["u", "v"]), "b": Cat(["u", "v"])}


@pytest.mark.parametrize("rule", RULES)
def test_each_rule_of_the_inference(rule):
    rows, expected = RULES[rule]
    structure = infer_structure(history_of(rows, RULE_DISTS))[0]
    assert structure.conditions == expected


def test_the_structure_restricted_to_a_partial_search_space():
    structure = infer_structure(study_of(history()).trials)[0]
    # without model (fixed by a PartialFixedSampler): what reads it goes, transitively
    space = {n: DISTS[n] for n in EXPECTED if n != "model"}
    space["extra"] = Float(0, 1)
    space["n_layers"] = Int(1, 4)  # another range: unconditional, its children go
    restricted = structure.restricted(space)
    assert restricted.conditions == {
        "opt": None, "nesterov": None, "momentum": EXPECTED["momentum"], "extra": None,
        "n_layers": None}
    assert restricted.distributions["n_layers"] == Int(1, 4)
    assert restricted.ordered() == ["extra", "opt", "nesterov", "momentum", "n_layers"]


def random_objective(trial, rng):
    """A define-by-run objective whose branches depend on the values asked before, with a
    range that changes now and then and a parameter asked at random."""
    model = trial.suggest_categorical("model", ["a", "b", "c"])
    if model == "a":
        trial.suggest_float("xa", 0, 1)
        if trial.suggest_categorical("sub", ["u", "v"]) == "v":
            trial.suggest_int("deep", 1, 3)
    elif model == "b":
        trial.suggest_float("xb", 0, 1 if rng.random() < 0.9 else 2)
    n = trial.suggest_int("n", 1, 4)
    for j in range(1, n):
        trial.suggest_float(f"w{j}", 0, 1)
    if rng.random() < 0.1:
        trial.suggest_float("rare", 0, 1)
    return 0.0


@pytest.mark.parametrize("seed", range(4))
def test_the_incremental_upkeep_equals_an_inference_from_scratch(seed, monkeypatch):
    """Trials finishing out of order (some failing), the structure looked at after each:
    always what inferring it from all complete trials gives; inferred again only now and
    then (when a trial disagrees with it)."""
    inferred = []
    monkeypatch.setattr(structure_module, "infer_structure",
                        lambda trials: (inferred.append(1), infer_structure(trials))[1])
    rng = np.random.default_rng(seed)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
    space = ConditionalSearchSpace()
    running = []
    for _ in range(60):
        trial = study.ask()
        random_objective(trial, rng)
        running.append(trial)
        while running and rng.random() < 0.6:
            done = running.pop(int(rng.integers(len(running))))
            if rng.random() < 0.9:
                study.tell(done, 0.0)
            else:
                study.tell(done, state=TrialState.FAIL)
            trials = study.get_trials(deepcopy=False)
            got = space.calculate(trials)
            assert got == infer_structure([t for t in trials
                                           if t.state == TrialState.COMPLETE])[0]
    assert len(space.structure.conditions) >= 5  # the test saw conditions
    finished = sum(t.state.is_finished() for t in study.trials)
    assert len(inferred) < finished / 4


def cash(trial):
    """Choose a classifier, then its hyperparameters (the svm's degree only for its poly
    kernel); minimum 0 at knn with k = 7."""
    model = trial.suggest_categorical("model", ["svm", "rf", "knn"])
    if model == "svm":
        value = 0.2 + (math.log10(trial.suggest_float("C", 1e-3, 1e3, log=True)) - 1) ** 2 / 4
        if trial.suggest_categorical("kernel", ["rbf", "poly"]) == "poly":
            value += 0.1 * abs(trial.suggest_int("degree", 2, 5) - 3)
        return value
    if model == "rf":
        return 0.1 + (trial.suggest_int("trees", 10, 500, step=10) - 300) ** 2 / 1e5 + \
            trial.suggest_float("frac", 0, 1)
    return abs(trial.suggest_int("k", 1, 30) - 7) / 10


class Recording(optuna.samplers.RandomSampler):
    """A random sampler that records what it samples: ``(trial number, parameter)``."""

    def __init__(self, seed=0):
        super().__init__(seed=seed)
        self.sampled = []

    def sample_independent(self, study, trial, param_name, param_distribution):
        self.sampled.append((trial.number, param_name))
        return super().sample_independent(study, trial, param_name, param_distribution)


def proposal(trial) -> dict:
    return json.loads(trial.system_attrs[f"{sampler_module.PROPOSAL_KEY}:0"])


def told_as_run(sampler, study) -> dict:
    """Every finished trial told to the sampler's optimizer once, as it ran (its parameters
    as the optimizer codes them); returns optuna number -> coded parameters."""
    mirror = sampler._mirror
    assert mirror.sync(study.get_trials(deepcopy=False), -1, (1.0,))
    told = {t.extra["optuna_number"]: t.params for t in mirror.optimizer.trials
            if t.state != "pending"}
    assert len(told) == sum(t.state != "pending" for t in mirror.optimizer.trials)
    expressible = {t.number: mirror.encode(t.params, t.distributions) for t in study.trials
                   if t.state == TrialState.COMPLETE}
    assert told == {n: p for n, p in expressible.items() if p is not None}
    return told


def test_cash_every_conditional_parameter_is_proposed_after_the_startup_trials(caplog):
    independent = Recording(seed=0)
    sampler = make(n_startup_trials=8, independent_sampler=independent)
    study = optuna.create_study(sampler=sampler)
    with caplog.at_level(logging.WARNING, logger=sampler_module.__name__):
        study.optimize(cash, n_trials=24)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    # the first trial, and parameters seen first in a trial, are sampled independently; from
    # the startup trials on, none: each trial asks exactly the parameters proposed
    assert independent.sampled and max(n for n, _ in independent.sampled) < 8
    assert not caplog.records  # (nothing sampled independently that trials had shown)
    for t in study.trials[8:]:
        assert t.params == proposal(t)
    assert {n: c for n, c in sampler._search_space.structure.conditions.items()} == {
        "model": None, "C": In("model", [0]), "kernel": In("model", [0]),
        "degree": In("kernel", [1]), "trees": In("model", [1]), "frac": In("model", [1]),
        "k": In("model", [2])}
    told = told_as_run(sampler, study)
    assert sorted(told) == list(range(24))
    assert study.best_value < 0.3


def test_a_branch_disagreeing_with_the_proposal_is_sampled_independently_and_told_as_it_ran():
    """The history says x exists only for model a; the objective asks for it with b too."""
    independent = Recording(seed=1)
    rows = [{"model": m, ("x" if m == "a" else "y"): 0.1 * i} for i, m in enumerate("abab")]
    dists = {"model": Cat(["a", "b"]), "x": Float(0, 1), "y": Float(0, 1)}
    # (b is the better model: the optimizer proposes it soon)
    study = study_of(history_of(rows, dists, [1.0, -1.0, 1.0, -1.0]),
                     independent_sampler=independent, n_startup_trials=0)
    sampler = study.sampler

    def objective(trial):
        if trial.suggest_categorical("model", ["a", "b"]) == "b":
            trial.suggest_float("y", 0, 1)
        return trial.suggest_float("x", 0, 1)

    for _ in range(10):
        study.optimize(objective, n_trials=1)
        if proposal(study.trials[-1])["model"] == "b":
            break
    else:
        pytest.fail("the optimizer never proposed model b")
    last = study.trials[-1]
    assert set(proposal(last)) == {"model", "y"} and set(last.params) == {"model", "x", "y"}
    assert independent.sampled[-1] == (last.number, "x")
    # x is now present where nothing explains it: the independent sampler's from now on
    relative_sample(study)
    assert sampler._search_space.structure.conditions == {"model": None, "y": In("model", [1])}
    assert list(sampler._mirror.codecs) == ["model", "y"]
    assert told_as_run(sampler, study)[last.number] == {"p0": 1, "p1": last.params["y"]}


def test_a_trial_run_with_other_values_than_proposed_is_told_as_it_ran(monkeypatch):
    builds = []
    init = sampler_module._Mirror.__init__
    monkeypatch.setattr(sampler_module._Mirror, "__init__",
                        lambda self, *a: (builds.append(1), init(self, *a))[1])
    study = optuna.create_study(sampler=make(n_startup_trials=2))
    for model in ("svm", "rf", "knn"):  # every branch shown
        study.enqueue_trial({"model": model})
    study.optimize(cash, n_trials=8)
    trial = study.ask()
    trial.relative_params  # proposed: pending in the optimizer
    proposed = proposal(study._storage.get_trial(trial._trial_id))
    structure = study.sampler._search_space.structure
    # the trial runs another branch (as a process not using the proposal would)
    ran = {"svm": {"model": "svm", "C": 10.0, "kernel": "rbf"}, "knn": {"model": "knn", "k": 7},
           "rf": {"model": "rf", "trees": 300, "frac": 0.5}}
    other = next(m for m in ran if m != proposed["model"])
    dists = {"model": DISTS["model"], "C": DISTS["C"], "kernel": DISTS["kernel"],
             "k": Int(1, 30), "trees": DISTS["trees"], "frac": Float(0, 1)}
    for name, value in ran[other].items():
        study._storage.set_trial_param(trial._trial_id, name,
                                       dists[name].to_internal_repr(value), dists[name])
    study.tell(trial, cash(optuna.trial.FixedTrial(ran[other])))
    n_builds = len(builds)
    relative_sample(study)
    assert study.sampler._search_space.structure == structure  # (not why it is built again)
    told = told_as_run(study.sampler, study)
    assert told[trial.number]["p0"] == ["svm", "rf", "knn"].index(other)
    assert len(builds) == n_builds + 1  # built again once, telling every trial as it ran


def test_an_enqueued_branch_the_proposal_has_no_values_for():
    independent = Recording(seed=0)
    study = optuna.create_study(sampler=make(n_startup_trials=2,
                                             independent_sampler=independent))
    study.optimize(cash, n_trials=12)
    for model in ("svm", "rf", "knn"):
        study.enqueue_trial({"model": model})
        study.optimize(cash, n_trials=1)
        assert study.trials[-1].params["model"] == model
    assert sorted(told_as_run(study.sampler, study)) == list(range(15))
    # each other parameter of an enqueued trial is the proposal's, or was drawn independently
    # where the proposal was for another branch
    drawn = [(n, name) for n, name in independent.sampled if n >= 12]
    assert drawn
    for t in study.trials[12:]:
        for name, value in t.params.items():
            assert name == "model" or (t.number, name) in drawn or \
                proposal(t)[name] == value


def test_two_samplers_sharing_a_storage_tell_every_trial_as_it_ran(tmp_path):
    """Two samplers on one SQLite study (as two processes), trials asked and told
    interleaved: each sees the other's running trials as pending, and tells every trial once,
    with the parameters it ran with."""
    storage = f"sqlite:///{tmp_path / 'cash.db'}"
    studies = [optuna.create_study(study_name="cash", storage=storage, load_if_exists=True,
                                   sampler=make(seed=s, n_startup_trials=4)) for s in (0, 1)]
    running = []
    for i in range(14):
        study = studies[i % 2]
        trial = study.ask()
        running.append((study, trial, cash(trial)))
        if len(running) == 3:
            study_, trial_, value = running.pop(0)
            study_.tell(trial_, value)
    for study, trial, value in running:
        study.tell(trial, value)
    for study in studies:
        relative_sample(study)  # trials 14 and 15, running
    for study in studies:
        assert sorted(told_as_run(study.sampler, study)) == list(range(14))
        assert len(study.sampler._mirror.optimizer.pending) == 2


def test_threads_tell_every_trial_as_it_ran():
    study = optuna.create_study(sampler=make(n_startup_trials=4))
    study.optimize(cash, n_trials=16, n_jobs=2)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    relative_sample(study)
    assert sorted(told_as_run(study.sampler, study)) == list(range(16))


def test_a_pickled_sampler_resumes_a_conditional_study():
    study = optuna.create_study(sampler=make(n_startup_trials=4))
    study.optimize(cash, n_trials=10)
    structure = study.sampler._search_space.structure
    restored = pickle.loads(pickle.dumps(study.sampler))
    assert restored._mirror is None and restored._search_space.structure == Structure({}, {})
    study.sampler = restored
    study.optimize(cash, n_trials=4)
    assert restored._search_space.structure.conditions.keys() >= \
        {n for n, c in structure.conditions.items() if c is not None}
    assert sorted(told_as_run(restored, study)) == list(range(14))


def test_the_warning_names_why_a_shown_parameter_is_sampled_independently(caplog):
    def objective(trial):
        trial.suggest_float("x", 0, 1)
        if trial.number % 3 == 1:  # present where no parameter explains
            trial.suggest_float("odd", 0, 1)
        return trial.suggest_float("y", 0, 1 + trial.number // 4)  # a range that changes

    with caplog.at_level(logging.WARNING, logger=sampler_module.__name__):
        optuna.create_study(sampler=make(n_startup_trials=2)).optimize(objective, n_trials=9)
    messages = {r.getMessage().split("'")[1]: r.getMessage() for r in caplog.records}
    assert set(messages) == {"odd", "y"}  # once each; none for a parameter seen first
    assert "no parameter asked before it" in messages["odd"]
    assert "distribution differs" in messages["y"]
