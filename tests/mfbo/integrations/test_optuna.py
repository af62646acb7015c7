"""MondrianSampler, from_optuna and to_optuna (mfbo.integrations.optuna).

The first part re-states, for MondrianSampler, the generic sampler tests of optuna's own
repository (``tests/samplers_tests/test_samplers.py``, which optuna's wheel does not ship):
test_sampler_reseed_rng, test_raise_error_for_samplers_during_multi_objectives, test_float,
test_int, test_categorical, test_sample_relative_numerical, test_sample_relative_categorical,
test_sample_relative_mixed, test_conditional_sample_independent, test_nan_objective_value,
test_partial_fixed_sampling, test_after_trial (and its pruning and failing variants),
test_sample_single_distribution, test_single_parameter_objective,
test_conditional_parameter_objective, test_combination_of_different_distributions_objective,
test_dynamic_range_objective, test_reproducible, test_reseed_rng_change_sampling and
test_trial_relative_params (n_jobs 1 and 2).  Sizes are reduced where optuna's run long.
The second part checks what is mfbo's own: the incremental mirror of the study (each trial
told once, the forest never refit, running trials pending), directions, enqueued trials,
pickling, two processes sharing a journal file, and moving trials either way.
"""

from __future__ import annotations

import json
import math
import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

optuna = pytest.importorskip("optuna", reason="optuna is optional: pip install \"mfbo[optuna]\"")

from optuna.distributions import (CategoricalDistribution, FloatDistribution,  # noqa: E402
                                  IntDistribution)
from optuna.trial import TrialState  # noqa: E402

import mfbo  # noqa: E402
from mfbo.integrations.optuna import MondrianSampler, from_optuna, to_optuna  # noqa: E402
from mfbo.integrations.optuna import sampler as sampler_module  # noqa: E402
from surrogates import MondrianForestRegressor  # noqa: E402
from tests.support import checkout_env, ROOT  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)


def make(**kwargs) -> MondrianSampler:
    """The sampler as optuna's tests parametrise relative samplers (no startup trials)."""
    kwargs.setdefault("n_startup_trials", 0)
    # fewer random candidates keep the many small studies below quick
    kwargs.setdefault("n_random_candidates", 200)
    return MondrianSampler(**kwargs)


def new_trial(study):
    trial_id = study._storage.create_new_trial(study._study_id)
    return study._storage.get_trial(trial_id)


FLOATS = [FloatDistribution(-1.0, 1.0), FloatDistribution(0.0, 1.0), FloatDistribution(-1.0, 0.0),
          FloatDistribution(1e-7, 1.0, log=True), FloatDistribution(-10, 10, step=0.1),
          FloatDistribution(-10.2, 10.2, step=0.1)]
INTS = [IntDistribution(-10, 10), IntDistribution(0, 10), IntDistribution(-10, 0),
        IntDistribution(-10, 10, step=2), IntDistribution(0, 10, step=2),
        IntDistribution(-10, 0, step=2), IntDistribution(1, 100, log=True)]
RELATIVE = [FloatDistribution(-1.0, 1.0), FloatDistribution(1e-7, 1.0, log=True),
            FloatDistribution(-10, 10, step=0.5), IntDistribution(3, 10),
            IntDistribution(1, 100, log=True), IntDistribution(3, 9, step=2)]

SUGGEST = [lambda t, n: t.suggest_float(n, 0, 10),
           lambda t, n: t.suggest_int(n, 0, 10),
           lambda t, n: t.suggest_categorical(n, [0, 1, 2]),
           lambda t, n: t.suggest_float(n, 0, 10, step=0.5),
           lambda t, n: t.suggest_float(n, 1e-7, 10, log=True),
           lambda t, n: t.suggest_int(n, 1, 10, log=True)]


def check_value(value, distribution):
    """A value as optuna's tests want it: of the distribution, a plain Python number."""
    assert distribution._contains(distribution.to_internal_repr(value))
    assert not isinstance(value, (np.floating, np.integer))
    if isinstance(distribution, IntDistribution):
        assert isinstance(value, int)
    elif isinstance(distribution, FloatDistribution):
        assert isinstance(value, float)
        if distribution.step is not None:
            k = (value - distribution.low) / distribution.step
            assert k == pytest.approx(round(k), abs=1e-8)


# -- optuna's generic sampler tests, re-stated ----------------------------------------------------

def test_sampler_reseed_rng():
    inner = optuna.samplers.RandomSampler(seed=0)
    sampler = make(seed=0, independent_sampler=inner)
    before_seed, before_inner = sampler._seed, str(inner._rng.rng.get_state())
    sampler.reseed_rng()
    assert sampler._seed != before_seed
    assert str(inner._rng.rng.get_state()) != before_inner  # the independent sampler's too


def test_multi_objective_studies_are_searched_for_their_front():
    def objective(trial):
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        return (x - 0.2) ** 2 + y ** 2, -((x - 0.8) ** 2 + (y - 0.5) ** 2)
    study = optuna.create_study(directions=["minimize", "maximize"],
                                sampler=make(seed=0, n_startup_trials=8))
    study.optimize(objective, n_trials=20)
    opt = study.sampler._mirror.optimizer
    assert opt.directions == ("minimize", "minimize")  # losses: the maximised one negated
    told = {t.extra["optuna_number"]: t.values for t in opt.trials if t.state == "complete"}
    for t in study.trials[:-1]:
        assert told[t.number] == pytest.approx((t.values[0], -t.values[1]))
    assert {t.origin for t in opt.trials[8:]} == {"outcomes"}
    assert len(study.best_trials) >= 2


def test_constraints_func_is_kept_as_optuna_keeps_it_and_steers_the_proposals():
    def objective(trial):
        return (trial.suggest_float("x", 0, 1) - 1) ** 2
    sampler = make(seed=0, n_startup_trials=6, constraints_func=lambda t: [t.params["x"] - 0.5])
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=20)
    assert all(t.system_attrs["constraints"] == (t.params["x"] - 0.5,) for t in study.trials)
    assert study.sampler._mirror.optimizer.objectives.constraints == ("constraint_0",)
    after = [t.params["x"] <= 0.5 for t in study.trials[6:]]
    assert np.mean(after) >= 0.6
    assert study.best_trial.params["x"] <= 0.5 and study.best_trial.params["x"] > 0.45
    with pytest.raises(TypeError, match="constraints_func must be callable"):
        make(constraints_func=1)
    for reserved in ("directions", "constraints"):
        with pytest.raises(TypeError, match=reserved):
            make(**{reserved: ["minimize"]})
    bad = optuna.create_study(sampler=make(constraints_func=lambda t: [float("nan")]))
    with pytest.raises(ValueError, match="not NaN"):
        bad.optimize(objective, n_trials=1)


@pytest.mark.skipif(not hasattr(optuna.trial.Trial, "set_constraint"),
                    reason="trial.set_constraint is Optuna 5's")
def test_constraints_set_by_the_objective_are_read():
    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        trial.set_constraint("low", x - 0.5)
        trial.set_constraint("high", 0.1 - x)
        return (x - 1) ** 2
    study = optuna.create_study(sampler=make(seed=0, n_startup_trials=6))
    study.optimize(objective, n_trials=18)
    opt = study.sampler._mirror.optimizer
    assert opt.objectives.constraints == ("constraint_0", "constraint_1")
    for t in opt.trials:
        if t.state == "complete":
            x = study.trials[t.extra["optuna_number"]].params["x"]
            assert t.constraints == pytest.approx((0.1 - x, x - 0.5))  # keys in sorted order
    assert 0.45 < study.best_trial.params["x"] <= 0.5


@pytest.mark.parametrize("distribution", FLOATS + INTS, ids=str)
def test_float_and_int_independent(distribution):
    study = optuna.create_study(sampler=make(seed=1))
    for _ in range(30):
        check_value(study.sampler.sample_independent(study, new_trial(study), "x", distribution),
                    distribution)


@pytest.mark.parametrize("choices", [(1, 2, 3), ("a", "b", "c"), (1, "a")])
def test_categorical_independent(choices):
    distribution = CategoricalDistribution(choices)
    study = optuna.create_study(sampler=make(seed=1))
    for _ in range(30):
        value = study.sampler.sample_independent(study, new_trial(study), "x", distribution)
        assert value in choices


@pytest.mark.parametrize("x_distribution,y_distribution",
                         list(zip(RELATIVE, RELATIVE)) + list(zip(RELATIVE, RELATIVE[1:] +
                                                                  RELATIVE[:1])), ids=str)
def test_sample_relative_numerical(x_distribution, y_distribution):
    search_space = dict(x=x_distribution, y=y_distribution)
    study = optuna.create_study(sampler=make(seed=0))
    trial = study.ask(search_space)
    study.tell(trial, sum(trial.params.values()))
    for _ in range(4):
        params = study.sampler.sample_relative(study, new_trial(study), search_space)
        assert set(params) == {"x", "y"}
        for name, distribution in search_space.items():
            check_value(params[name], distribution)


def test_sample_relative_categorical():
    search_space = dict(x=CategoricalDistribution([1, 10, 100]),
                        y=CategoricalDistribution([-1, -10, -100]))
    study = optuna.create_study(sampler=make(seed=0))
    trial = study.ask(search_space)
    study.tell(trial, sum(trial.params.values()))
    for _ in range(6):
        params = study.sampler.sample_relative(study, new_trial(study), search_space)
        for name, distribution in search_space.items():
            assert params[name] in distribution.choices
            assert type(params[name]) is int


@pytest.mark.parametrize("x_distribution", RELATIVE[:5], ids=str)
def test_sample_relative_mixed(x_distribution):
    search_space = dict(x=x_distribution, y=CategoricalDistribution([-1, -10, -100]))
    study = optuna.create_study(sampler=make(seed=0))
    trial = study.ask(search_space)
    study.tell(trial, sum(trial.params.values()))
    for _ in range(4):
        params = study.sampler.sample_relative(study, new_trial(study), search_space)
        check_value(params["x"], x_distribution)
        assert params["y"] in (-1, -10, -100) and type(params["y"]) is int


def test_sample_relative_empty_space():
    study = optuna.create_study(sampler=make())
    assert study.sampler.sample_relative(study, new_trial(study), {}) == {}
    single = {"a": IntDistribution(1, 1), "b": CategoricalDistribution([3])}
    assert study.sampler.sample_relative(study, new_trial(study), single) == {}


def test_conditional_sample_independent():
    study = optuna.create_study(sampler=make())
    category = CategoricalDistribution(choices=["x", "y"])
    dependent = CategoricalDistribution(choices=["a", "b"])
    study.add_trial(optuna.create_trial(params={"category": "x", "x": "a"},
                                        distributions={"category": category, "x": dependent},
                                        value=0.1))
    study.add_trial(optuna.create_trial(params={"category": "y", "y": "b"},
                                        distributions={"category": category, "y": dependent},
                                        value=0.1))
    trial = new_trial(study)
    value = study.sampler.sample_independent(study, trial, "category", category)
    assert value in ["x", "y"]
    assert study.sampler.sample_independent(study, trial, value, dependent) in ["a", "b"]


def test_nan_objective_value():
    study = optuna.create_study(sampler=make(seed=0))

    def objective(trial, base_value):
        return trial.suggest_float("x", 0.1, 0.2) + base_value

    for i in range(10, 1, -1):
        study.optimize(lambda t: objective(t, i), n_trials=1, catch=())
    assert int(study.best_value) == 2
    study.optimize(lambda t: objective(t, float("nan")), n_trials=1, catch=())
    assert int(study.best_value) == 2
    study.optimize(lambda t: objective(t, 1), n_trials=1, catch=())
    assert int(study.best_value) == 1
    # the NaN trial is a failed trial of the optimizer, told once
    opt = study.sampler._mirror.optimizer
    assert [t.extra["optuna_number"] for t in opt.trials if t.state == "failed"] == [9]


def test_partial_fixed_sampling():
    study = optuna.create_study(sampler=make(seed=0))

    def objective(trial):
        x = trial.suggest_float("x", -1, 1)
        y = trial.suggest_int("y", -1, 1)
        z = trial.suggest_float("z", -1, 1)
        return x + y + z

    study.optimize(objective, n_trials=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study.sampler = optuna.samplers.PartialFixedSampler({"y": 0}, study.sampler)
    study.optimize(objective, n_trials=2)
    assert [t.params["y"] for t in study.trials[-2:]] == [0, 0]


@pytest.mark.parametrize("fail", ["complete", "pruned", "failed"])
def test_after_trial_is_passed_on_to_the_independent_sampler(fail):
    calls = []

    class Recording(optuna.samplers.RandomSampler):
        def before_trial(self, study, trial):
            assert trial.state == TrialState.RUNNING
            calls.append(("before", trial.number))

        def after_trial(self, study, trial, state, values):
            assert trial.state == TrialState.RUNNING and trial.values is None
            calls.append(("after", trial.number, state, values))

    study = optuna.create_study(sampler=make(independent_sampler=Recording(seed=0)))

    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        if fail == "pruned":
            raise optuna.TrialPruned()
        if fail == "failed":
            raise RuntimeError("boom")
        return x

    study.optimize(objective, n_trials=3, catch=(RuntimeError,))
    state = {"complete": TrialState.COMPLETE, "pruned": TrialState.PRUNED,
             "failed": TrialState.FAIL}[fail]
    assert [c[:3] for c in calls if c[0] == "after"] == [("after", i, state) for i in range(3)]
    assert [c for c in calls if c[0] == "before"] == [("before", i) for i in range(3)]
    if fail == "complete":
        assert all(len(c[3]) == 1 for c in calls if c[0] == "after")


def test_sample_single_distribution():
    space = {"a": CategoricalDistribution([1]), "b": IntDistribution(low=1, high=1),
             "c": IntDistribution(low=1, high=1, log=True),
             "d": FloatDistribution(low=1.0, high=1.0),
             "e": FloatDistribution(low=1.0, high=1.0, log=True),
             "f": FloatDistribution(low=1.0, high=1.0, step=1.0)}
    study = optuna.create_study(sampler=make())
    for _ in range(2):
        trial = study.ask(fixed_distributions=space)
        study.tell(trial, 1.0)
        assert all(trial.params[n] == 1 for n in space)


@pytest.mark.parametrize("suggest", SUGGEST, ids=range(len(SUGGEST)))
def test_single_parameter_objective(suggest):
    study = optuna.create_study(sampler=make(seed=0))
    study.optimize(lambda t: suggest(t, "x"), n_trials=10)
    assert len(study.trials) == 10
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    for t in study.trials:
        check_value(t.params["x"], t.distributions["x"]) if not isinstance(
            t.distributions["x"], CategoricalDistribution) else None


def test_conditional_parameter_objective():
    def objective(trial):
        x = trial.suggest_categorical("x", [True, False])
        if x:
            return trial.suggest_float("y", 0, 1)
        return trial.suggest_float("z", 0, 1)

    study = optuna.create_study(sampler=make(seed=0, warn_independent_sampling=False))
    study.optimize(objective, n_trials=10)
    assert len(study.trials) == 10
    assert all(t.state == TrialState.COMPLETE for t in study.trials)


@pytest.mark.parametrize("i", range(len(SUGGEST)))
@pytest.mark.parametrize("j", range(len(SUGGEST)))
def test_combination_of_different_distributions_objective(i, j):
    study = optuna.create_study(sampler=make(seed=0))
    study.optimize(lambda t: SUGGEST[i](t, "x") + SUGGEST[j](t, "y"), n_trials=3)
    assert len(study.trials) == 3
    assert all(t.state == TrialState.COMPLETE for t in study.trials)


@pytest.mark.parametrize("second_low,second_high", [(0, 5), (0, 20), (20, 30)])
def test_dynamic_range_objective(second_low, second_high, monkeypatch):
    builds = []
    init = sampler_module._Mirror.__init__
    monkeypatch.setattr(sampler_module._Mirror, "__init__",
                        lambda self, structure, *a: (builds.append(sorted(
                            structure.distributions)), init(self, structure, *a))[1])

    def objective(trial, low, high):
        return trial.suggest_float("x", low, high) + trial.suggest_int("y", low, high)

    study = optuna.create_study(sampler=make(seed=0, warn_independent_sampling=False))
    study.optimize(lambda t: objective(t, 0, 10), n_trials=10)
    study.optimize(lambda t: objective(t, second_low, second_high), n_trials=10)
    assert len(study.trials) == 20
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    # the optimizer is rebuilt when the relative space changes, not at every trial
    assert len(builds) <= 3


def seven_params(objective_func):
    def objective(trial):
        a = trial.suggest_float("a", 1, 9)
        b = trial.suggest_float("b", 1, 9, log=True)
        c = trial.suggest_float("c", 1, 9, step=1)
        d = trial.suggest_int("d", 1, 9)
        e = trial.suggest_int("e", 1, 9, log=True)
        f = trial.suggest_int("f", 1, 9, step=2)
        g = trial.suggest_categorical("g", range(1, 10))
        return objective_func(a, b, c, d, e, f, g)
    return objective


@pytest.mark.parametrize("objective_func", [lambda *a: sum(a), lambda *a: 0.0],
                         ids=["sum", "constant"])
def test_reproducible(objective_func):
    def run(seed, reseed=False):
        sampler = make(seed=seed, n_startup_trials=4)
        if reseed:
            sampler.reseed_rng()
        study = optuna.create_study(sampler=sampler)
        study.optimize(seven_params(objective_func), n_trials=12)
        return [t.params for t in study.trials]

    first = run(1)
    assert run(1) == first
    assert run(2) != first
    # test_reseed_rng_change_sampling
    assert run(1, reseed=True) != first


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_trial_relative_params(n_jobs):
    study = optuna.create_study(sampler=make(seed=0))

    def objective(trial):
        assert trial._relative_params is None
        trial.suggest_float("x", -10, 10)
        trial.suggest_float("y", -10, 10)
        assert trial._relative_params is not None
        return -1

    study.optimize(objective, n_trials=10, n_jobs=n_jobs)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)


# -- what is mfbo's own ---------------------------------------------------------------------------

def test_every_distribution_kind_in_one_study_gives_valid_values():
    def objective(trial):
        s = 0.0
        for i, suggest in enumerate(SUGGEST):
            s += float(suggest(trial, f"p{i}"))
        s += trial.suggest_float("q", -10.2, 10.2, step=0.1)
        s += trial.suggest_int("r", -10, -1, step=3)
        s += len(str(trial.suggest_categorical("c", [None, True, 1, 1.0, "a"])))
        return s

    study = optuna.create_study(sampler=make(seed=3, n_startup_trials=3))
    study.optimize(objective, n_trials=12)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    for t in study.trials:
        for name, d in t.distributions.items():
            assert d._contains(d.to_internal_repr(t.params[name]))
    assert len(study.sampler._mirror.codecs) == 9  # all sampled by the optimizer


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="seed"):
        MondrianSampler(seed=-1)
    with pytest.raises(ValueError, match="n_startup_trials"):
        MondrianSampler(n_startup_trials=1.5)
    with pytest.raises(TypeError, match="independent_sampler"):
        MondrianSampler(independent_sampler="random")
    with pytest.raises(TypeError, match="'random_state'.*seed"):
        MondrianSampler(random_state=0)
    with pytest.raises(ValueError, match="surrogate"):
        MondrianSampler(surrogate="no-such-forest")
    with pytest.raises(ValueError, match="acquisition"):
        MondrianSampler(acquisition="best")


def test_a_relative_sample_looks_only_at_unsettled_trials():
    sampler = make(seed=0, n_startup_trials=3)
    study = optuna.create_study(sampler=sampler)
    running = study.ask()  # stays running: trials from it on are not settled
    running.suggest_float("x", 0, 1)
    study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=20)
    mirror = sampler._mirror
    assert mirror.settled == 0  # the oldest trial is still running
    study.tell(running, 0.5)
    study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=5)
    assert mirror.settled == 25 and not mirror.done  # every finished trial told and settled
    assert mirror.optimizer.n_finished == 26 - 1  # all but the current one, told once

    looked = []

    class Settled:  # a settled trial: its number may be read (where to stop), nothing else
        def __init__(self, number):
            self._number = number

        @property
        def number(self):
            looked.append(self._number)
            return self._number

        def __getattr__(self, name):
            raise AssertionError(f"settled trial {self._number} was looked at again ({name})")

    trials = study.get_trials(deepcopy=False)
    mirror.sync([Settled(i) for i in range(25)] + trials[25:], -1, (1.0,))  # only trial 25 is new
    assert looked == [24]  # where the walk back from the end stopped
    assert mirror.settled == 26 and mirror.optimizer.n_finished == 26


@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_directions(direction):
    sign = 1 if direction == "minimize" else -1
    study = optuna.create_study(direction=direction, sampler=make(seed=0, n_startup_trials=5))
    study.optimize(lambda t: sign * (t.suggest_float("x", -3, 3) - 1) ** 2, n_trials=25)
    assert abs(study.best_params["x"] - 1) < 0.3
    opt = study.sampler._mirror.optimizer
    told = {t.extra["optuna_number"]: t.value for t in opt.trials if t.state == "complete"}
    # the optimizer minimises the loss: the value, negated for a maximising study
    assert all(told[n] == pytest.approx(sign * study.trials[n].value) for n in told)


def test_the_forest_is_updated_incrementally_and_each_trial_told_once(monkeypatch):
    fits, partial = [], []
    fit, partial_fit = MondrianForestRegressor.fit, MondrianForestRegressor.partial_fit
    monkeypatch.setattr(MondrianForestRegressor, "fit",
                        lambda self, X, y, *a, **k: (fits.append(len(y)),
                                                     fit(self, X, y, *a, **k))[1])
    monkeypatch.setattr(MondrianForestRegressor, "partial_fit",
                        lambda self, X, y, *a, **k: (partial.append(len(y)),
                                                     partial_fit(self, X, y, *a, **k))[1])
    study = optuna.create_study(sampler=make(seed=0, n_startup_trials=3))
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1),
                   n_trials=15)
    opt = study.sampler._mirror.optimizer
    # trials 0..13 told (14 is the last one sampled, still pending then), each once
    numbers = [t.extra["optuna_number"] for t in opt.trials if t.state != "pending"]
    assert sorted(numbers) == list(range(14))
    assert [t.state for t in opt.trials].count("pending") == 1
    assert fits == [1] and partial == [1] * 13  # one fit, then one point per trial


def test_running_trials_are_pending_trials():
    study = optuna.create_study(sampler=make(seed=0, n_startup_trials=2))
    study.optimize(lambda t: t.suggest_float("x", 0, 1) ** 2, n_trials=4)
    # three trials asked and not told, as parallel workers do
    running = [study.ask() for _ in range(3)]
    xs = [t.suggest_float("x", 0, 1) for t in running]
    opt = study.sampler._mirror.optimizer
    assert [t.params["p0"] for t in opt.pending] == pytest.approx(xs)
    assert len(set(xs)) == 3
    # a running trial suggested by another sampler (another process) is pending too
    other = study.ask()
    other.suggest_float("x", 0, 1)  # relative sample of this study's sampler: registers it
    outsider = optuna.trial.Trial(study, study._storage.create_new_trial(study._study_id))
    study._storage.set_trial_param(outsider._trial_id, "x", 0.123,
                                   FloatDistribution(0, 1))
    nxt = study.ask()
    nxt.suggest_float("x", 0, 1)
    assert 0.123 in [t.params["p0"] for t in opt.pending]
    for t in running + [other, outsider, nxt]:
        study.tell(t, 1.0)
    last = study.ask()
    last.suggest_float("x", 0, 1)
    assert len(opt.pending) == 1  # only the trial just asked


def test_pruned_and_failed_trials():
    study = optuna.create_study(sampler=make(seed=0, n_startup_trials=2))

    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        if trial.number % 3 == 1:
            trial.report(5.0 + x, step=0)
            trial.report(4.0 + x, step=1)
            raise optuna.TrialPruned()
        if trial.number % 3 == 2:
            raise RuntimeError("diverged")
        return x

    study.optimize(objective, n_trials=7, catch=(RuntimeError,))
    opt = study.sampler._mirror.optimizer
    by_number = {t.extra["optuna_number"]: t for t in opt.trials if t.state != "pending"}
    # a pruned trial is pruned, with its curve, never complete with its last value
    x1 = study.trials[1].params["x"]
    assert by_number[1].state == "pruned" and by_number[1].value is None
    assert by_number[1].intermediate_values == {0: 5.0 + x1, 1: 4.0 + x1}
    assert by_number[4].state == "pruned" and opt.n_pruned == 2
    assert by_number[2].state == "failed" and by_number[5].state == "failed"
    assert by_number[3].value == pytest.approx(study.trials[3].value)
    # the surrogate ranks it below the complete trials: max(its last loss, the worst so far)
    order = [t.extra["optuna_number"] for t in sorted(
        (t for t in opt.trials if t.state != "pending"), key=lambda t: t.end)]
    rows = dict(zip(order, opt.study.obs.y))
    assert rows[1] == max(4.0 + x1, rows[0])
    assert rows[4] >= max(rows[n] for n in (0, 1, 2, 3))


def test_failed_trials_modelled_as_infeasible():
    def objective(trial):
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        if x + y > 0.8:
            raise MemoryError("out of memory")
        return (x - 1) ** 2 + (y - 1) ** 2
    study = optuna.create_study(sampler=make(seed=0, n_startup_trials=8,
                                             on_failure="infeasible"))
    study.optimize(objective, n_trials=24, catch=(MemoryError,))
    opt = study.sampler._mirror.optimizer
    assert opt.on_failure == "infeasible" and opt.study.obs.Y.shape[1] == 2
    failed = {t.extra.get("optuna_number") for t in opt.trials if t.state == "failed"}
    assert failed and {t.origin for t in opt.trials[8:]} == {"outcomes"}
    assert study.best_trial.params["x"] + study.best_trial.params["y"] <= 0.8
    with pytest.raises(ValueError, match="on_failure must be one of"):
        optuna.create_study(sampler=make(on_failure="crash")).optimize(objective, n_trials=1)

def test_enqueued_trials_are_run_and_told():
    study = optuna.create_study(sampler=make(seed=0, n_startup_trials=2))

    def objective(trial):
        return trial.suggest_float("x", 0, 1) + trial.suggest_int("k", 0, 4)

    study.optimize(objective, n_trials=3)
    study.enqueue_trial({"x": 0.25, "k": 3})  # every parameter: no relative sample
    study.enqueue_trial({"k": 2})  # partly: the optimizer proposes x
    study.optimize(objective, n_trials=3)
    assert study.trials[3].params == {"x": 0.25, "k": 3}
    assert study.trials[4].params["k"] == 2
    study.sampler.sample_relative(study, new_trial(study),
                                  study.sampler.infer_relative_search_space(study, None))
    opt = study.sampler._mirror.optimizer
    told = {t.extra["optuna_number"]: t.params for t in opt.trials if t.state != "pending"}
    assert sorted(told) == list(range(6))
    assert told[3] == {"p0": 3, "p1": 0.25} and told[4]["p0"] == 2  # names sorted: k, x


def test_pickled_sampler_rebuilds_from_the_study():
    study = optuna.create_study(sampler=make(seed=0, n_startup_trials=2))
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=4)
    restored = pickle.loads(pickle.dumps(study.sampler))
    assert restored._mirror is None and restored._seed == study.sampler._seed
    study.sampler = restored
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=2)
    told = [t for t in restored._mirror.optimizer.trials if t.state != "pending"]
    assert len(told) == 5


def test_a_sampler_moved_to_another_study_starts_afresh():
    sampler = make(seed=0, n_startup_trials=2)
    storage = optuna.storages.InMemoryStorage()
    a = optuna.create_study(study_name="a", storage=storage, sampler=sampler)
    a.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=4)
    b = optuna.create_study(study_name="b", storage=storage, sampler=sampler)
    b.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    told = [t for t in sampler._mirror.optimizer.trials if t.state != "pending"]
    assert len(told) == 2  # b's first two trials only


WORKER = """
import json, sys, time
import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState
from mfbo.integrations.optuna import MondrianSampler
from mfbo.integrations.optuna import sampler as sampler_module
from surrogates import MondrianForestRegressor

optuna.logging.set_verbosity(optuna.logging.WARNING)
fits, builds = [], []
fit = MondrianForestRegressor.fit
MondrianForestRegressor.fit = lambda self, X, y, *a, **k: (fits.append(len(y)),
                                                          fit(self, X, y, *a, **k))[1]
init = sampler_module._Mirror.__init__
sampler_module._Mirror.__init__ = lambda self, *a: (builds.append(1), init(self, *a))[1]

path, seed = sys.argv[1], int(sys.argv[2])
sampler = MondrianSampler(seed=seed, n_startup_trials=4, n_random_candidates=300)
study = optuna.load_study(study_name="shared", storage=JournalStorage(JournalFileBackend(path)),
                          sampler=sampler)

def objective(trial):
    x = trial.suggest_float("x", -2, 2)
    y = trial.suggest_int("y", -3, 3)
    time.sleep(0.01)
    return (x - 0.5) ** 2 + abs(y)

study.optimize(objective, n_trials=12)
# wait for the other process: its 12 trials finished too (it may have started later)
deadline = time.time() + 120
while time.time() < deadline and len(study.get_trials(
        deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED))) < 24:
    time.sleep(0.1)
trials = study.get_trials(deepcopy=False)
sampler._mirror.sync(trials, -1, (1.0,))  # what the next relative sample would tell it
opt = sampler._mirror.optimizer
print(json.dumps({
    "told": [t.extra["optuna_number"] for t in opt.trials if t.state != "pending"],
    "pending": len(opt.pending), "n_finished": opt.n_finished,
    "complete": [t.number for t in trials if t.state == TrialState.COMPLETE],
    "n_trials": len(trials), "fits": fits, "builds": len(builds)}))
"""


def test_two_processes_sharing_a_journal_file(tmp_path):
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    path = str(tmp_path / "journal.log")
    optuna.create_study(study_name="shared", storage=JournalStorage(JournalFileBackend(path)))
    script = tmp_path / "worker.py"
    script.write_text(textwrap.dedent(WORKER))
    env = checkout_env(NUMBA_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, str(script), path, str(seed)], cwd=ROOT,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for seed in (0, 1)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    for out in outs:
        assert out["n_trials"] == 24
        # every complete trial told once, whichever process ran it, and nothing else
        assert sorted(out["told"]) == sorted(out["complete"]) == list(range(24))
        assert out["n_finished"] == 24 and out["pending"] == 0
        # one optimizer; each of its two forests (with and without the linear trend, as the
        # space has an integer) fitted once, on the first observation; the rest partial_fit
        assert out["builds"] == 1 and out["fits"] == [1, 1]


# -- moving trials between optuna and mfbo ---------------------------------------------------------

def test_from_optuna_warm_starts_an_optimizer():
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(0))

    def objective(trial):
        x = trial.suggest_float("lr", 1e-4, 1.0, log=True)
        k = trial.suggest_int("depth", 2, 10, step=2)
        s = trial.suggest_float("frac", 0.0, 1.0, step=0.25)
        c = trial.suggest_categorical("kernel", ["rbf", "linear"])
        if trial.number == 3:
            raise RuntimeError("diverged")
        return -math.log(x) ** 2 - k + s + (c == "rbf")

    study.optimize(objective, n_trials=12, catch=(RuntimeError,))
    opt = from_optuna(study, random_state=0)
    assert isinstance(opt, mfbo.Optimizer)
    d = opt.space.dimensions
    assert d["lr"] == mfbo.Real(1e-4, 1.0, log=True)
    assert d["depth"] == mfbo.Ordinal([2, 4, 6, 8, 10])
    assert d["frac"] == mfbo.Ordinal([0.0, 0.25, 0.5, 0.75, 1.0])
    assert d["kernel"] == mfbo.Categorical(["rbf", "linear"])
    assert opt.n_finished == 12 and opt.result().n_failed == 1
    # the optimizer maximises too, and holds the values as optuna recorded them
    best = opt.best_trial
    assert opt.direction == "maximize" and best.value == pytest.approx(study.best_value)
    np.testing.assert_allclose(sorted(opt._obs.y)[:1], [-study.best_value])  # losses
    assert best.params == study.best_params and best.extra["optuna_number"] == \
        study.best_trial.number
    t = opt.ask()
    assert set(t.params) == {"lr", "depth", "frac", "kernel"}
    with pytest.raises(ValueError, match="direction='minimize' differs"):
        from_optuna(study, direction="minimize")
    assert to_optuna(opt.result()).direction == optuna.study.StudyDirection.MAXIMIZE


def test_from_optuna_refuses_what_it_cannot_carry(tmp_path):
    mo = optuna.create_study(directions=["minimize", "minimize"])
    with pytest.raises(ValueError, match="no complete trial"):
        from_optuna(mo)
    with pytest.raises(ValueError, match="no complete trial"):
        from_optuna(optuna.create_study())
    bad = optuna.create_study()
    bad.optimize(lambda t: t.suggest_float("learning-rate", 0, 1), n_trials=2)
    with pytest.raises(ValueError, match="learning-rate"):
        from_optuna(bad)
    # with an explicit space, trials outside it are left out
    opt = from_optuna(bad, space={"lr": (0.0, 1.0)})
    assert opt.n_trials == 0
    # the trials are told once: a storage that already holds the study is refused
    good = optuna.create_study()
    good.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    db = str(tmp_path / "s.db")
    from_optuna(good, storage=db).close()
    with pytest.raises(ValueError, match="told twice"):
        from_optuna(good, storage=db)


def test_to_optuna_and_back():
    def f(x, n, kind):
        if kind == "bad":
            raise ValueError("no")
        return {"loss": (x - 0.2) ** 2 + n, "note": "ok"}

    space = {"x": mfbo.Real(0.0, 1.0), "n": mfbo.Integer(1, 4),
             "kind": mfbo.Categorical(["good", "bad"])}
    result = mfbo.minimize(f, space, n_calls=10, random_state=0, progress_bar=False)
    study = to_optuna(result)
    assert study.direction == optuna.study.StudyDirection.MINIMIZE
    complete = study.get_trials(states=(TrialState.COMPLETE,))
    assert len(complete) == sum(t.state == "complete" for t in result.trials)
    assert len(study.get_trials(states=(TrialState.FAIL,))) == result.n_failed
    assert study.best_value == pytest.approx(result.best_value)
    assert study.best_params == result.best_params
    assert study.best_trial.user_attrs["note"] == "ok"
    assert study.best_trial.datetime_start <= study.best_trial.datetime_complete
    # a study of the other direction is given negated values; the method on the result does
    # the same
    maxi = to_optuna(result, optuna.create_study(direction="maximize"))
    assert maxi.best_value == pytest.approx(-result.best_value)
    up = mfbo.minimize(lambda x, n, kind: -f(x, n, kind)["loss"], space, n_calls=6,
                       direction="maximize", random_state=0, progress_bar=False)
    assert to_optuna(up).best_value == pytest.approx(up.best_value)
    assert to_optuna(up, optuna.create_study()).best_value == pytest.approx(-up.best_value)
    # and back again
    opt = from_optuna(study)
    assert opt.best_trial.value == pytest.approx(result.best_value)
    with pytest.raises(ValueError, match="new study"):
        to_optuna(result, study, study_name="x")


def test_missing_optuna_is_a_clear_import_error(python_run):
    proc = python_run("""
        import sys
        sys.modules["optuna"] = None  # as if it were not installed
        import mfbo
        try:
            mfbo.from_optuna
        except ImportError as exc:
            print("ImportError:", exc)
        """, 120)
    assert "pip install" in proc.stdout and "optuna" in proc.stdout, proc.stderr[-2000:]


EXTREME = {
    "int_0_2**62": lambda t: t.suggest_int("n", 0, 2**62),
    "int_log_1_2**62": lambda t: t.suggest_int("n", 1, 2**62, log=True),
    "float_step_1e-17": lambda t: t.suggest_float("x", 0, 1, step=1e-17),
    "int_step_3_0_2**62-1": lambda t: t.suggest_int("n", 0, 2**62 - 1, step=3),
    "int_2**62+1_2**63-1": lambda t: t.suggest_int("n", 2**62 + 1, 2**63 - 1),
    "float_step_1e-9": lambda t: t.suggest_float("x", -1e5, 1e5, step=1e-9),
    "float_step_1e-12": lambda t: t.suggest_float("x", 0, 1, step=1e-12),
}


@pytest.mark.parametrize("suggest", EXTREME.values(), ids=EXTREME.keys())
def test_ranges_beyond_the_floats_resolution_are_sampled_by_the_optimizer(suggest):
    """Ranges of more integers or grid steps than floats tell apart: every value is one optuna
    accepts (``_contains``, which checks it in floats) and the optimizer's own proposal."""
    values = []

    def objective(trial):
        values.append(suggest(trial))
        return abs(float(values[-1])) / 2**62

    study = optuna.create_study(sampler=MondrianSampler(seed=0))
    study.optimize(objective, n_trials=15)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 15
    # (the first trial has no relative search space yet: optuna's RandomSampler draws it,
    # and a value of it need not be one that optuna accepts)
    for t, v in zip(study.trials[1:], values[1:]):
        (name, d), = t.distributions.items()
        check_value(v, d)
        assert v == json.loads(t.system_attrs[f"{sampler_module.PROPOSAL_KEY}:0"])[name]
    assert len(set(values)) == 15


# -- pruned trials: told as pruned, with their intermediate values ------------------------------
def learning_curve(trial):
    x = trial.suggest_float("x", 0.0, 1.0)
    for step in range(5):
        trial.report(x + 1.0 / (step + 1), step)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return x + 0.2


@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_the_sampler_tells_pruned_trials_as_pruned(direction):
    sign = 1.0 if direction == "minimize" else -1.0

    def signed(trial):
        return learning_curve(_Signed(trial, sign))

    study = optuna.create_study(direction=direction,
                                sampler=MondrianSampler(seed=0, n_startup_trials=8),
                                pruner=optuna.pruners.PercentilePruner(25.0, n_startup_trials=2))
    study.optimize(signed, n_trials=11)  # the 11th trial's proposal is told the first 10
    mirror = study.sampler._mirror.optimizer
    pruned = [t for t in study.trials[:10] if t.state == TrialState.PRUNED]
    assert pruned, "the pruner stopped no trial: nothing was compared"
    told = {t.extra["optuna_number"]: t for t in mirror.trials if t.state != "pending"}
    for t in study.trials[:10]:
        mine = told[t.number]
        assert mine.state == t.state.name.lower()
        # the mirror minimises losses: values times the study's sign
        assert mine.intermediate_values == {s: sign * v for s, v in
                                            t.intermediate_values.items()}
        if t.state == TrialState.PRUNED:
            assert mine.value is None
    assert mirror.n_pruned == len(pruned)
    best = min((t for t in study.trials[:10] if t.state == TrialState.COMPLETE),
               key=lambda t: sign * t.value)
    assert mirror.best_trial.extra["optuna_number"] == best.number


class _Signed:
    """An optuna trial that reports (and returns through the objective) values times
    ``sign``, so one curve serves both directions."""

    def __init__(self, trial, sign):
        self._trial, self._sign = trial, sign

    def suggest_float(self, *args, **kwargs):
        return self._trial.suggest_float(*args, **kwargs)

    def report(self, value, step):
        self._trial.report(self._sign * value, step)

    def should_prune(self):
        return self._trial.should_prune()


def test_from_optuna_and_to_optuna_keep_pruned_trials():
    study = optuna.create_study(pruner=optuna.pruners.MedianPruner(n_startup_trials=2),
                                sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(learning_curve, n_trials=12)
    pruned = [t.number for t in study.trials if t.state == TrialState.PRUNED]
    assert pruned
    opt = from_optuna(study, surrogate="random")
    assert [t.state for t in opt.trials] == [t.state.name.lower() for t in study.trials]
    assert [t.intermediate_values for t in opt.trials] == \
        [t.intermediate_values for t in study.trials]
    assert all(t.extra["optuna_number"] == u.number for t, u in zip(opt.trials, study.trials))
    back = to_optuna(opt.result())
    assert [t.state for t in back.trials] == [t.state for t in study.trials]
    assert [t.intermediate_values for t in back.trials] == \
        [t.intermediate_values for t in study.trials]
    assert all(math.isclose(a.value, b.value) for a, b in zip(back.trials, study.trials)
               if a.state == TrialState.COMPLETE)
    opt.close()


def test_several_objectives_and_constraints_go_both_ways():
    def objective(trial):
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        trial.set_user_attr("c", x - 0.7)
        return x + y, -(x - y) ** 2
    sampler = optuna.samplers.RandomSampler(seed=0)
    sampler_c = optuna.samplers.NSGAIISampler(seed=0,
                                              constraints_func=lambda t: [t.user_attrs["c"]])
    for s, n_cons in ((sampler, 0), (sampler_c, 1)):
        study = optuna.create_study(directions=["minimize", "maximize"], sampler=s)
        study.optimize(objective, n_trials=12)
        opt = from_optuna(study, random_state=0)
        assert opt.directions == ("minimize", "maximize")
        assert len(opt.objectives.constraints) == n_cons
        by_number = {t.extra["optuna_number"]: t for t in opt.trials}
        for t in study.trials:
            assert by_number[t.number].values == tuple(t.values)
            if n_cons:
                assert by_number[t.number].constraints == (t.user_attrs["c"],)
        assert {t.id for t in opt.best_trials} == \
            {by_number[t.number].id for t in study.best_trials}
        back = to_optuna(opt.result())
        assert [d.name for d in back.directions] == ["MINIMIZE", "MAXIMIZE"]
        assert [t.values for t in back.trials] == [t.values for t in study.trials]
        if n_cons:
            assert [t.system_attrs["constraints"] for t in back.trials] == \
                [[t.user_attrs["c"]] for t in study.trials]
        assert {t.number for t in back.best_trials} == {t.number for t in study.best_trials}
    with pytest.raises(ValueError, match="directions=.* is taken from study"):
        from_optuna(study, directions=["minimize", "minimize"])
    with pytest.raises(ValueError, match="has 1 objective"):
        to_optuna(opt.result(), optuna.create_study())


def test_to_optuna_keeps_a_conditional_trial_s_active_parameters_only():
    space = mfbo.Space({"model": mfbo.Categorical(["svm", "tree"]),
                        "C": mfbo.Real(0.1, 10, log=True, when={"model": "svm"}),
                        "depth": mfbo.Integer(1, 8, when={"model": "tree"})})
    res = mfbo.minimize(lambda model, C=1.0, depth=1: C + depth, space, n_calls=8,
                        random_state=0, progress_bar=False)
    study = to_optuna(res)
    for t, ours in zip(study.trials, res.trials):
        assert t.params == ours.params
