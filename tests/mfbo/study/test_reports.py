"""Intermediate values and pruned trials in the study's journal: ``report`` and ``rung`` events
replayed into :attr:`Trial.intermediate_values` and :attr:`Trial.rungs`, a ``tell`` of state
``"pruned"``, what a pruned trial feeds the surrogate, every bad payload refused with the event
it lies in, bad input to :meth:`Optimizer.report`/``tell`` refused with nothing recorded, and
interleavings of two handles of one SQLite study replayed to one state."""

import tempfile
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mfbo
from mfbo import InMemoryStorage, Optimizer, Study, TrialFinished
from mfbo.pruners import SuccessiveHalvingPruner
from tests.mfbo.study.test_study import S, _ask, _tell
from tests.support import SPACE

P = [{"x": 0.1, "y": 0.2}, {"x": -0.5, "y": 0.5}, {"x": 0.3, "y": -0.2}]


def _report(i, step, value):
    return {"id": i, "step": step, "value": value}


def _journal(direction="minimize", on_failure="worst"):
    storage = InMemoryStorage()
    study = Study(SPACE, storage, direction=direction, on_failure=on_failure)
    sign = 1.0 if direction == "minimize" else -1.0
    events = [("ask", _ask(0, P[0])), ("ask", _ask(1, P[1])),
              ("report", _report(0, 0, sign * 3.0)), ("report", _report(1, 0, sign * 5.0)),
              ("report", _report(0, 2, sign * 1.0)), ("tell", _tell(0, sign * 1.0)),
              ("rung", {"id": 1, "rung": 0, "value": sign * 5.0}),
              ("tell", _tell(1, state="pruned")),
              ("ask", _ask(2, P[2])), ("report", _report(2, 0, sign * 0.5)),
              ("tell", _tell(2, state="pruned"))]
    for kind, payload in events:
        storage.append("default", kind, payload)
    study.refresh()
    return study, sign


@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_reports_and_pruned_trials_are_replayed(direction):
    study, sign = _journal(direction)
    t0, t1, t2 = study.trials
    assert [t.state for t in study.trials] == ["complete", "pruned", "pruned"]
    assert t0.intermediate_values == {0: sign * 3.0, 2: sign * 1.0} and t0.last_step == 2
    assert t1.intermediate_values == {0: sign * 5.0} and t1.rungs == {0: sign * 5.0}
    assert t1.value is None and t2.value is None
    assert study.best is t0 and study.n_finished == 3 and study.n_pruned == 2
    # a pruned trial: max(its last loss, the worst loss so far): 5 (its own), then 5 (the
    # worst so far, above its last loss 0.5)
    np.testing.assert_array_equal(study.obs.y, [1.0, 5.0, 5.0])
    np.testing.assert_array_equal(study.obs.X, S.to_unit(P))
    assert len(study.obs_origins) == study.obs.n
    # the caller's copies cannot change the study
    copy, = study.copies([t0])
    copy.intermediate_values[7] = 0.0
    copy.rungs[3] = 0.0
    assert 7 not in t0.intermediate_values and not t0.rungs


def test_with_on_failure_ignore_a_pruned_trial_feeds_nothing():
    study, _ = _journal(on_failure="ignore")
    np.testing.assert_array_equal(study.obs.y, [1.0])
    assert study.obs_origins == [None] and study.n_pruned == 2


def test_a_first_pruned_trial_feeds_its_last_loss():
    storage = InMemoryStorage()
    study = Study(SPACE, storage)
    for kind, payload in [("ask", _ask(0, P[0])), ("report", _report(0, 0, 4.0)),
                          ("report", _report(0, 1, 2.0)), ("tell", _tell(0, state="pruned")),
                          ("ask", _ask(1, P[1])), ("tell", _tell(1, state="pruned"))]:
        storage.append("default", kind, payload)
    study.refresh()
    # the second reported nothing: the worst so far (the first's last loss)
    np.testing.assert_array_equal(study.obs.y, [2.0, 2.0])


BAD = [
    (("report", _report(0, -1, 1.0)), "step must be an integer >= 0"),
    (("report", _report(0, "1", 1.0)), "step must be an integer >= 0"),
    (("report", _report(0, True, 1.0)), "step must be an integer >= 0"),
    (("report", _report(0, 1, float("nan"))), "value must be finite"),
    (("report", _report(0, 1, "1.0")), "value must be a number"),
    (("report", _report(0, 1, None)), "value must be a number"),
    (("report", _report(5, 1, 1.0)), "no trial with id 5"),
    (("report", _report(1, 1, 1.0)), r"trial 1 was already told \(complete\)"),
    (("report", _report(0, 0, 2.0)), "trial 0 reported step 0 already"),
    (("report", {"id": 0, "value": 1.0}), "'step'"),
    (("report", [0, 1, 1.0]), "payload must be a JSON object"),
    (("rung", {"id": 0, "rung": 1, "value": 1.0}), "rung 1 out of order"),
    (("rung", {"id": 0, "rung": 0, "value": float("inf")}), "value must be finite"),
    (("rung", {"id": 1, "rung": 0, "value": 1.0}), "already told"),
    (("tell", _tell(0, 1.0, state="pruned")), "a pruned trial has no value"),
    (("tell", _tell(0, state="stopped")), "state must be 'complete', 'failed' or 'pruned'"),
]


@pytest.mark.parametrize("event, message", BAD, ids=[m for _, m in BAD])
def test_a_bad_report_rung_or_pruned_tell_is_refused_with_its_event(event, message):
    storage = InMemoryStorage()
    study = Study(SPACE, storage)
    for kind, payload in [("ask", _ask(0, P[0])), ("report", _report(0, 0, 1.0)),
                          ("ask", _ask(1, P[1])), ("tell", _tell(1, 1.0))]:
        storage.append("default", kind, payload)
    study.refresh()
    storage.append("default", *event)
    with pytest.raises(ValueError, match=f"event 5 .'{event[0]}'. is invalid: .*{message}"):
        study.refresh()
    # the rows before it stand
    assert study.trials[0].intermediate_values == {0: 1.0} and study.n_finished == 1


def _events(opt):
    return len(list(opt.storage.read(opt.study_name, 0)))


def test_bad_reports_and_tells_record_nothing():
    opt = Optimizer(SPACE, surrogate="random", random_state=0)
    t = opt.ask()
    opt.report(t, 0, 1.0)
    done = opt.ask()
    opt.tell(done, 0.5)
    before = _events(opt)
    for args, error, match in [
            ((t, -1, 1.0), ValueError, "step"), ((t, 1.5, 1.0), ValueError, "step"),
            ((t, None, 1.0), ValueError, "step"), ((t, 1, float("inf")), ValueError, "value"),
            ((t, 1, "a"), TypeError, "value"), ((99, 1, 1.0), ValueError, "unknown trial id 99"),
            (("0", 1, 1.0), TypeError, "trial must be a Trial or its id"),
            ((done, 1, 1.0), TrialFinished, "already told")]:
        with pytest.raises(error, match=match):
            opt.report(*args)
    for kwargs, error, match in [
            (dict(value=1.0, state="pruned"), ValueError, "without a value"),
            (dict(state="stopped"), ValueError, "state must be"),
            (dict(state="pruned", error="x"), ValueError, "without a value or an error"),
            (dict(value=1.0, state="failed"), ValueError, "state='failed'"),
            (dict(value=None, state="complete"), ValueError, "needs a finite value")]:
        with pytest.raises(error, match=match):
            opt.tell(t, **kwargs)
    with pytest.raises(ValueError, match="must be a Trial or a trial id"):
        opt.tell(dict(P[0]), state="pruned")
    with pytest.raises(TrialFinished):
        opt.should_prune(done)
    with pytest.warns(UserWarning, match="reported step 0 already"):
        opt.report(t, 0, 9.0)
    assert _events(opt) == before
    assert opt.trials[t.id].intermediate_values == {0: 1.0} and opt.trials[t.id].state == "pending"
    told = opt.tell(t, mfbo.TrialPruned("stopped"))
    assert told.state == "pruned" and told.intermediate_values == {0: 1.0} and told.error is None
    opt.close()


def _state(study):
    return ([(t.state, t.value, t.intermediate_values, t.rungs) for t in study.trials],
            study.obs.y.tolist(), list(study.obs_origins), study.n_pruned, study.n_finished)


def pruning_run(storage) -> tuple:
    """A study in ``storage`` with reports, rungs, a complete, a pruned and a pending trial;
    the state of the study as a new handle replays it, and as the optimizer holds it."""
    opt = Optimizer(SPACE, surrogate="random", random_state=0, storage=storage,
                    pruner=SuccessiveHalvingPruner())
    t = opt.ask()
    for step, v in enumerate([3.0, 2.0, 1.5]):
        opt.report(t, step, v)
        assert not opt.should_prune(t)
    opt.tell(t, 1.5)
    u = opt.ask()
    opt.report(u, 1, 4.0)
    assert opt.should_prune(u)
    opt.tell(u, state="pruned")
    pending = opt.ask()
    opt.report(pending, 3, 0.25)
    again = Study.open(storage)
    opt.close()
    return _state(again), _state(opt.study)


def test_reports_survive_a_resume_in_sqlite(tmp_path):
    replayed, held = pruning_run(str(tmp_path / "s.db"))
    assert replayed == held
    trials = replayed[0]
    assert [t[0] for t in trials] == ["complete", "pruned", "pending"]
    assert trials[2][2] == {3: 0.25} and trials[1][3] == {0: 4.0}


#: one operation: (handle, kind, which pending trial, step, value)
OPS = st.lists(st.tuples(st.integers(0, 1), st.sampled_from(["ask", "report", "report",
                                                              "prune", "tell", "pruned"]),
                         st.integers(0, 5), st.integers(0, 4),
                         st.sampled_from([0.5, 1.0, 2.0, 3.0])), max_size=25)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_interleaved_handles_of_one_sqlite_study_replay_to_one_state(ops):
    pruner = SuccessiveHalvingPruner(min_resource=1, reduction_factor=2)
    expected = {}  # trial id -> the values reported, as the handles accepted them
    with tempfile.TemporaryDirectory() as tmp:
        db = f"{tmp}/s.db"
        handles = [Optimizer(SPACE, surrogate="random", random_state=i, storage=db,
                             pruner=pruner) for i in range(2)]
        for h, kind, which, step, value in ops:
            opt = handles[h]
            opt.refresh()
            pending = [t.id for t in opt.study.pending]
            if kind == "ask" or not pending:
                expected[opt.ask().id] = {}
                continue
            tid = pending[which % len(pending)]
            if kind == "report":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # a step reported already
                    opt.report(tid, step, value)
                expected[tid].setdefault(step, value)
            elif kind == "prune":
                if opt.should_prune(tid):
                    opt.tell(tid, state="pruned")
            elif kind == "tell":
                opt.tell(tid, value)
            else:
                opt.tell(tid, state="pruned")
        for opt in handles:
            opt.refresh()
        fresh = Study.open(db)
        assert _state(handles[0].study) == _state(handles[1].study) == _state(fresh)
        assert {t.id: t.intermediate_values for t in fresh.trials} == expected
        # the surrogate's rows, by the rule, from the tells in journal order
        rows = []
        for _, kind, p in fresh.storage.read("default", 0):
            t = fresh.trials[p["id"]]
            if kind != "tell":
                continue
            if t.state == "complete":
                rows.append(t.value)
                continue
            worse = [max(rows)] if rows else []
            if t.state == "pruned" and t.intermediate_values:
                worse.append(t.intermediate_values[max(t.intermediate_values)])
            if worse:
                rows.append(max(worse))
        assert fresh.obs.y.tolist() == rows and len(fresh.obs_origins) == len(rows)
        assert fresh.n_pruned == sum(t.state == "pruned" for t in fresh.trials)
        for opt in handles:
            opt.close()
