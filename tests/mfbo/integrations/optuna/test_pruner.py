"""The model-based pruner in optuna studies (:mod:`mfbo.integrations.optuna.pruner`): it decides
as mfbo's own on the same configurations and curves, in both directions; it prunes in an optuna
run with its samplers; a new pruner on a stored study decides as the first; its parameters are
coded in the unit interval; bad settings and multi-objective studies are refused."""

import pickle

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")

import mfbo  # noqa: E402
from mfbo.integrations.optuna import MondrianPruner  # noqa: E402
from mfbo.integrations.optuna.pruner import _Coder  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _curve(x, y, steps=9):
    final = (x - 0.3) ** 2 + (y - 0.7) ** 2
    return [final + (0.5 + x) / s for s in range(1, steps + 1)]


def _configs(n, seed):
    rng = np.random.default_rng(seed)
    return [{"x": float(a), "y": float(b)} for a, b in rng.uniform(0, 1, (n, 2))]


def _objective(sign=1.0):
    def objective(trial):
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        for s, v in enumerate(_curve(x, y), start=1):
            trial.report(sign * v, s)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return sign * v
    return objective


def _optuna_decisions(configs, direction, pruner):
    sign = 1.0 if direction == "minimize" else -1.0
    study = optuna.create_study(direction=direction, pruner=pruner)
    out = []
    for params in configs:
        study.enqueue_trial(params)
        t = study.ask()
        for s, v in enumerate(_curve(t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)),
                              start=1):
            t.report(sign * v, s)
            out.append((t.number, s, t.should_prune()))
            if out[-1][2]:
                study.tell(t, state=optuna.trial.TrialState.PRUNED)
                break
        else:
            study.tell(t, sign * v)
    return out


def _mfbo_decisions(configs, direction):
    sign = 1.0 if direction == "minimize" else -1.0
    opt = mfbo.Optimizer({"x": (0.0, 1.0), "y": (0.0, 1.0)}, surrogate="random",
                         direction=direction, pruner=mfbo.pruners.MondrianPruner(9))
    opt.enqueue(configs)
    out = []
    for _ in configs:
        t = opt.ask()
        for s, v in enumerate(_curve(t.params["x"], t.params["y"]), start=1):
            opt.report(t, s, sign * v)
            out.append((t.id, s, opt.should_prune(t)))
            if out[-1][2]:
                opt.tell(t, state="pruned")
                break
        else:
            opt.tell(t, sign * v)
    return out


@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_same_decisions_as_mfbos_own_pruner(direction):
    configs = _configs(30, 0)
    theirs = _optuna_decisions(configs, direction, MondrianPruner(9))
    assert theirs == _mfbo_decisions(configs, direction)
    assert sum(p for *_, p in theirs) > 0


def test_it_prunes_an_optuna_run_and_never_its_best_trial():
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0),
                                pruner=MondrianPruner(max_resource=9))
    study.optimize(_objective(), n_trials=40)
    states = [t.state for t in study.trials]
    assert states.count(optuna.trial.TrialState.PRUNED) >= 5
    assert study.best_trial.state == optuna.trial.TrialState.COMPLETE


def test_a_new_pruner_on_a_stored_study_decides_as_the_first(tmp_path):
    storage = f"sqlite:///{tmp_path / 's.db'}"
    configs = _configs(26, 1)
    first = _optuna_decisions(configs, "minimize", MondrianPruner(9))
    study = optuna.create_study(storage=storage, study_name="s",
                                pruner=MondrianPruner(9))
    for params in configs[:20]:
        study.enqueue_trial(params)
    study.optimize(_objective(), n_trials=20)
    # reopened with a fresh pruner (and a pickled copy of it): the rest as in one run
    again = optuna.load_study(storage=storage, study_name="s",
                              pruner=pickle.loads(pickle.dumps(MondrianPruner(9))))
    rest = []
    for params in configs[20:]:
        again.enqueue_trial(params)
        t = again.ask()
        for s, v in enumerate(_curve(t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)),
                              start=1):
            t.report(v, s)
            rest.append((t.number, s, t.should_prune()))
            if rest[-1][2]:
                again.tell(t, state=optuna.trial.TrialState.PRUNED)
                break
        else:
            again.tell(t, v)
    assert rest == [d for d in first if d[0] >= 20]
    assert [t.state.name for t in again.trials[:20]] == \
        ["PRUNED" if any(p for i, _, p in first if i == n) else "COMPLETE" for n in range(20)]


def test_parameters_are_coded_in_the_unit_interval():
    study = optuna.create_study()
    study.enqueue_trial({"lr": 1e-3, "n": 4, "kind": "b"})
    t = study.ask()
    t.suggest_float("lr", 1e-5, 1e-1, log=True)
    t.suggest_int("n", 1, 7)
    t.suggest_categorical("kind", ["a", "b", "c"])
    t.suggest_float("fixed", 2.0, 2.0)  # single-valued: no coordinate
    study.tell(t, 1.0)
    other = study.ask()
    other.suggest_float("lr", 1e-5, 1e-1, log=True)
    study.tell(other, 1.0)
    coder = _Coder([study.trials[0]])
    assert coder.names == ["kind", "lr", "n"]
    np.testing.assert_allclose(coder.unit(study.trials[0]), [0.5, 0.5, 0.5])
    u = coder.unit(study.trials[1])
    assert u[0] == u[2] == mfbo.Space.inactive_unit and 0 <= u[1] <= 1


@pytest.mark.parametrize("kwargs, name", [
    (dict(max_resource=0), "max_resource"), (dict(max_resource=9, threshold=1.0), "threshold"),
    (dict(max_resource=9, n_startup_trials=0), "n_startup_trials"),
    (dict(max_resource=9, seed=-2), "seed")])
def test_bad_settings_are_refused_naming_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        MondrianPruner(**kwargs)


def test_a_multi_objective_study_is_refused():
    study = optuna.create_study(directions=["minimize", "minimize"])
    t = study.ask()
    with pytest.raises(ValueError, match="single-objective"):
        MondrianPruner(9).prune(study, study.trials[t.number])


def test_repr_reads_as_the_call_that_makes_it():
    p = MondrianPruner(27, threshold=0.2)
    assert repr(eval(repr(p), {"MondrianPruner": MondrianPruner})) == repr(p)
