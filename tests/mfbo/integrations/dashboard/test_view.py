"""The read-only Optuna storage view of an mfbo journal: every study and trial as Optuna
sees them, read incrementally while a study grows, and every write refused."""

import inspect

import pytest

pytest.importorskip("optuna", reason='the view needs optuna (pip install "mfbo[dashboard]")')

import optuna  # noqa: E402
from optuna.storages import BaseStorage  # noqa: E402
from optuna.trial import TrialState  # noqa: E402

import mfbo  # noqa: E402
from mfbo import Categorical, Integer, Optimizer, Real, Space  # noqa: E402
from mfbo.storage import as_storage  # noqa: E402
from mfbo.integrations.dashboard.view import (TRIAL_ID_BASE, JournalView,  # noqa: E402
                                              ReadOnlyStorageError)
from tests.support import SPACE, quad  # noqa: E402


def _view(path, **options):
    return JournalView(as_storage(path, create=False, read_only=True), **options)


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "s.db")
    opt = Optimizer(SPACE, storage=path, study_name="first", random_state=0)
    for _ in range(6):
        t = opt.ask()
        opt.tell(t, quad(**t.params))
    opt.close()
    other = Optimizer({"n": Integer(1, 9)}, storage=path, study_name="second",
                      direction="maximize", random_state=1)
    t = other.ask()
    other.tell(t, 3.0)
    other.close()
    return path


def test_every_study_and_trial_as_optuna_sees_them(db):
    view = _view(db, refresh_interval=0)
    studies = view.get_all_studies()
    assert [s.study_name for s in studies] == ["first", "second"]
    assert [s._study_id for s in studies] == [0, 1]
    assert studies[1].direction == optuna.study.StudyDirection.MAXIMIZE
    assert view.get_study_id_from_name("second") == 1
    assert view.get_study_name_from_id(0) == "first"
    study = mfbo.Study.open(db, "first")
    trials = view.get_all_trials(0)
    assert [t.number for t in trials] == [t.id for t in study.trials]
    assert [t.value for t in trials] == [t.value for t in study.trials]
    assert [t.params for t in trials] == [t.params for t in study.trials]
    assert all(t.state == TrialState.COMPLETE for t in trials)
    assert view.get_best_trial(0).number == study.best.id
    second = view.get_all_trials(1)
    assert second[0]._trial_id == TRIAL_ID_BASE and second[0].params == {"n": second[0].params["n"]}
    assert view.get_trial(TRIAL_ID_BASE).value == 3.0
    assert view.get_trial_id_from_study_id_trial_number(1, 0) == TRIAL_ID_BASE
    # optuna's own API reads it
    loaded = optuna.load_study(study_name="first", storage=view)
    assert loaded.best_value == study.best.value and len(loaded.trials) == 6
    with pytest.raises(KeyError, match="no study with id 7"):
        view.get_all_trials(7)
    with pytest.raises(KeyError, match="no study named 'third'"):
        view.get_study_id_from_name("third")


def test_new_trials_and_studies_appear_and_only_touched_trials_are_converted(db):
    view = _view(db, refresh_interval=0)
    before = view.get_all_trials(0, deepcopy=False)
    opt = Optimizer(SPACE, storage=db, study_name="first", random_state=2)
    pending = opt.ask()
    opt.report(pending, 0, 5.0)
    now = view.get_all_trials(0, deepcopy=False)
    assert len(now) == 7 and now[6].state == TrialState.RUNNING
    assert now[6].intermediate_values == {0: 5.0} and now[6].datetime_complete is None
    assert all(a is b for a, b in zip(before, now[:6]))  # finished trials are not converted again
    opt.tell(pending, state="pruned")
    assert view.get_all_trials(0)[6].state == TrialState.PRUNED
    Optimizer(SPACE, storage=db, study_name="third").close()
    assert view.get_study_id_from_name("third") == 2
    assert len(view.get_all_studies()) == 3


def test_refresh_interval_bounds_how_often_the_journal_is_read(db):
    view = _view(db, refresh_interval=3600)
    assert len(view.get_all_trials(0)) == 6
    opt = Optimizer(SPACE, storage=db, study_name="first")
    opt.ask()
    assert len(view.get_all_trials(0)) == 6  # read again only once the interval has passed
    assert len(_view(db).get_all_trials(0)) == 7


def test_conditional_trials_lack_their_inactive_parameters_and_failures_keep_their_error(tmp_path):
    path = str(tmp_path / "c.db")
    space = Space({"model": Categorical(["svm", "tree"]),
                   "c": Real(0.1, 10.0, log=True, when={"model": "svm"}),
                   "depth": Integer(1, 8, when={"model": "tree"})})
    opt = Optimizer(space, storage=path, random_state=0)
    opt.tell({"model": "svm", "c": 1.0}, 0.5)
    opt.tell({"model": "tree", "depth": 3}, {"loss": 0.25, "note": "ok"})
    opt.tell({"model": "tree", "depth": 4}, RuntimeError("diverged"))
    opt.close()
    trials = _view(path).get_all_trials(0)
    assert trials[0].params == {"model": "svm", "c": 1.0} and set(trials[0].distributions) == {
        "model", "c"}
    assert trials[1].params == {"model": "tree", "depth": 3}
    assert trials[1].user_attrs == {"note": "ok", "mfbo_trial_id": 1}
    assert trials[2].state == TrialState.FAIL
    assert trials[2].user_attrs["mfbo_error"] == "RuntimeError: diverged"


WRITES = [name for name, member in inspect.getmembers(BaseStorage, inspect.isfunction)
          if name.startswith(("create_", "delete_", "set_")) or name == "check_trial_is_updatable"]
ARGUMENTS = {"directions": [optuna.study.StudyDirection.MINIMIZE], "study_id": 0,
             "trial_id": 0, "key": "k", "value": 1, "step": 0, "intermediate_value": 1.0,
             "param_name": "x", "param_value_internal": 0.5, "study_name": "new",
             "distribution": optuna.distributions.FloatDistribution(0, 1),
             "state": TrialState.COMPLETE, "values": [1.0], "trial_state": TrialState.RUNNING,
             "template_trial": None}


def test_every_write_of_optunas_storage_interface_is_refused(db):
    assert len(WRITES) == 11  # those optuna's BaseStorage has
    view = _view(db)
    events = len(view.storage.read("first", 0))
    for name in WRITES:
        method = getattr(view, name)
        params = list(inspect.signature(method).parameters)
        with pytest.raises(ReadOnlyStorageError, match="read-only view of an mfbo journal"):
            method(*[ARGUMENTS[p] for p in params])
    loaded = optuna.load_study(study_name="first", storage=view)
    with pytest.raises(ReadOnlyStorageError):
        loaded.set_user_attr("k", 1)
    with pytest.raises(ReadOnlyStorageError):
        loaded.ask()
    with pytest.raises(ReadOnlyStorageError):
        optuna.delete_study(study_name="first", storage=view)
    assert len(as_storage(db).read("first", 0)) == events
    assert view.storage.read_only


def test_bad_arguments_are_named(db):
    with pytest.raises(TypeError, match="storage must be an mfbo Storage"):
        JournalView(db)
    with pytest.raises(ValueError, match="refresh_interval"):
        _view(db, refresh_interval=-1)
    with pytest.raises(ValueError, match="study_name: no study named 'nope'"):
        _view(db, study_name="nope")
    only = _view(db, study_name="second")
    assert [s.study_name for s in only.get_all_studies()] == ["second"]


def test_a_postgresql_study_written_by_two_workers_is_seen_growing():
    from benchmarks.harness import postgres_server
    from benchmarks.harness.shared_workers import start_worker
    reason = postgres_server.unavailable()
    if reason is not None:
        pytest.skip(f"no PostgreSQL server: {reason}")
    with postgres_server.PostgresServer() as server:
        url = server.new_database()
        workers = [start_worker(url, "shared", target=30, sleep=0.05, seed=s) for s in (0, 1)]
        try:
            for w in workers:  # each has opened the study once it prints its first line
                w.stdout.readline()
            view = JournalView(as_storage(url, create=False, read_only=True),
                               refresh_interval=0)
            seen = [len(view.get_all_trials(0))]
            for w in workers:
                w.communicate(timeout=240)
                assert w.returncode == 0
                seen.append(len(view.get_all_trials(0)))
        finally:
            for w in workers:
                if w.poll() is None:
                    w.kill()
                    w.wait()
        study = mfbo.Study.open(as_storage(url, create=False, read_only=True), "shared")
        assert seen[-1] == study.n_trials and sorted(seen) == seen
        finished = view.get_all_trials(0, states=(TrialState.COMPLETE,))
        assert len(finished) == study.n_finished >= 30
        assert view.get_best_trial(0).value == study.best.value
        view.storage.close()
        study.storage.close()


def test_a_study_of_several_objectives_has_its_directions_names_and_pareto_front(tmp_path):
    path = str(tmp_path / "m.db")
    result = mfbo.minimize(lambda x, y: {"cost": x ** 2 + y, "score": x - y}, SPACE,
                           n_calls=12, directions={"cost": "minimize", "score": "maximize"},
                           storage=path, progress_bar=False, random_state=0)
    view = _view(path)
    assert view.get_study_directions(0) == [optuna.study.StudyDirection.MINIMIZE,
                                            optuna.study.StudyDirection.MAXIMIZE]
    assert view.get_study_system_attrs(0) == {"study:metric_names": ["cost", "score"]}
    assert [t.values for t in view.get_all_trials(0)] == [list(t.values) for t in result.trials]
    front = optuna.load_study(study_name="default", storage=view).best_trials
    assert sorted(t.number for t in front) == sorted(t.id for t in result.best_trials)
