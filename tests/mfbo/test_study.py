"""The study alone: a journal replayed into trials and observation arrays, with no model and no
proposal policy."""

import warnings

import numpy as np
import pytest

from mfbo import InMemoryStorage, Optimizer, Space, Study
from mfbo.space.candidates import make_candidates
from tests.support import SPACE, quad

S = Space(SPACE)


def _ask(i, params, owner=None):
    return {"id": i, "params": params, "unit": S.to_unit([params])[0].tolist(),
            "candidate": None, "owner": owner, "time": 0.0}


def _tell(i, value=None, state="complete", error=None):
    return {"id": i, "state": state, "value": value, "extra": {}, "error": error,
            "start": None, "end": 1.0, "worker": None}


def test_a_journal_written_by_hand_is_replayed_without_a_model():
    storage = InMemoryStorage()
    study = Study(SPACE, storage)
    P = [{"x": 0.1, "y": 0.2}, {"x": -0.5, "y": 0.5}, {"x": 0.3, "y": -0.2}, {"x": 0.9, "y": 0.9}]
    events = [("ask", _ask(0, P[0])), ("ask", _ask(1, P[1])), ("tell", _tell(1, 2.0)),
              ("tell", _tell(0, 1.0)), ("ask", _ask(2, P[2])),
              ("tell", _tell(2, state="failed", error="boom")), ("ask", _ask(3, P[3]))]
    for kind, payload in events:
        storage.append("default", kind, payload)
    assert study.n_trials == 0  # nothing is read until asked to
    study.refresh()
    assert [t.params for t in study.trials] == P
    assert [t.state for t in study.trials] == ["complete", "complete", "failed", "pending"]
    assert study.n_finished == 3 and [t.id for t in study.pending] == [3]
    assert study.best.id == 0 and study.best.value == 1.0
    assert study.seen(P[2]) and not study.seen({"x": 0.0, "y": 0.0})
    # observations in the order trials finished; the failure as the worst loss so far
    np.testing.assert_array_equal(study.obs.X, S.to_unit([P[1], P[0], P[2]]))
    np.testing.assert_array_equal(study.obs.y, [2.0, 1.0, 2.0])
    np.testing.assert_array_equal(study.asked.X, S.to_unit(P))
    ignoring = Study(SPACE, storage, on_failure="ignore")
    ignoring.refresh()
    np.testing.assert_array_equal(ignoring.obs.y, [2.0, 1.0])
    assert not hasattr(study, "model")


def test_a_study_reads_what_an_optimizer_wrote(tmp_path):
    db = str(tmp_path / "s.db")
    opt = Optimizer(SPACE, storage=db, random_state=0, n_initial=3, n_random_candidates=64)
    for i in range(6):
        t = opt.ask()
        opt.tell(t, ValueError("x") if i == 4 else quad(**t.params))
    opt.ask()  # one pending
    opt.close()
    study = Study(SPACE, db)
    study.refresh()
    assert [(t.params, t.state, t.value) for t in study.trials] == \
        [(t.params, t.state, t.value) for t in opt.trials]
    np.testing.assert_array_equal(study.obs.X, opt._obs.X)
    np.testing.assert_array_equal(study.obs.y, opt._obs.y)
    assert study.best.value == opt.best_trial.value and study.config["surrogate"] == "mondrian"
    # the optimizer that asked the pending trial is closed: it is an orphan, handed over
    with study.transaction():
        (orphan,) = study.reclaim(5)
    assert orphan.id == 6 and orphan.owner == study.owner
    told = study.tell(6, "complete", 0.5, {}, None, None, None, "w")
    assert told.state == "complete" and study.n_finished == 7 and not study.pending
    again = Optimizer(SPACE, storage=db, random_state=0)
    assert again.n_finished == 7 and again.best_trial.value == min(study.best.value, 0.5)


def test_a_study_checks_its_arguments_and_rows(tmp_path):
    with pytest.raises(ValueError, match="on_failure"):
        Study(SPACE, on_failure="zero")
    with pytest.raises(ValueError, match="study_name"):
        Study(SPACE, study_name="")
    storage = InMemoryStorage()
    study = Study(SPACE, storage)
    storage.append("default", "ask", _ask(0, {"x": 0.1, "y": 0.2}))
    storage.append("default", "tell", _tell(0, float("nan")))
    with pytest.raises(ValueError, match="event 2 .'tell'. is invalid: value must be finite"):
        study.refresh()
    cands = make_candidates(S, np.array([[0.0, 0.0], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="n_candidates"):
        Study(SPACE, storage, candidates=cands)


def test_a_failed_transaction_leaves_the_study_as_the_storage_holds_it():
    study = Study(SPACE)
    with study.transaction():
        study.add({"x": 0.1, "y": 0.1}, S.to_unit([{"x": 0.1, "y": 0.1}])[0], None)
    with pytest.raises(RuntimeError, match="later failure"):
        with study.transaction():
            study.add({"x": 0.2, "y": 0.2}, S.to_unit([{"x": 0.2, "y": 0.2}])[0], None)
            assert study.n_trials == 2
            raise RuntimeError("later failure")
    assert study.n_trials == 1 and [t.id for t in study.pending] == [0]
    assert study.asked.n == 1 and not study.seen({"x": 0.2, "y": 0.2})


def test_candidate_rows_asked_are_no_longer_available():
    C = np.array([[0.0, 0.0], [0.5, 0.5], [0.0, 0.0]])  # the last row repeats the first
    study = Study(SPACE, candidates=make_candidates(S, C))
    assert study.available.tolist() == [True, True, False]
    study.tell({"x": 0.5, "y": 0.5}, "complete", 1.0, {}, None, None, None, None)
    assert study.trials[0].candidate == 1 and study.available.tolist() == [True, False, False]


def test_pending_trials_without_an_owner_are_orphans_not_other_hosts(tmp_path):
    db = str(tmp_path / "o.db")
    Optimizer(SPACE, storage=db).close()
    study = Study(SPACE, db)
    with study.storage.transaction():
        study.storage.append("default", "ask", _ask(0, {"x": 0.1, "y": 0.2}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "other hosts" warning, and no crash writing it
        opt = Optimizer(SPACE, storage=db, random_state=0)
    assert opt.ask().id == 0  # asked again
