"""The study alone: a journal replayed into trials and observation arrays, with no model and no
proposal policy; its direction (``direction="maximize"``: the surrogate minimises the negated
values, everything the user sees is in the objective's own units, a stored study keeps its
direction); and its queue (``Optimizer.enqueue``, ``minimize(initial_points=...)``:
configurations asked first, in order, checked before anything is recorded, durable in a
stored study); and the journal's intermediate values and pruned trials (``report`` and
``rung`` events, a ``tell`` of state ``"pruned"``, what a pruned trial feeds the surrogate,
bad payloads and bad input refused, interleaved handles of one SQLite study replayed to one
state)."""

import json
import sqlite3
import tempfile
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mfbo
from mfbo import InMemoryStorage, Integer, Optimizer, Space, Study, TrialFinished
from mfbo.pruners import SuccessiveHalvingPruner
from mfbo.space.candidates import make_candidates
from tests.mfbo.study.journal_checks import replay
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


def score(x, y):
    return 1.0 - quad(x, y)  # maximum 1 at (0.3, -0.2)


def test_maximize_finds_the_maximum_and_mirrors_minimize():
    kw = dict(n_calls=30, random_state=0, progress_bar=False)
    up = mfbo.minimize(lambda x, y: -quad(x, y), SPACE, direction="maximize", **kw)
    down = mfbo.minimize(quad, SPACE, **kw)
    # the surrogate sees the same losses (-(-quad) = quad): the same trials, in the same order
    assert [t.params for t in up.trials] == [t.params for t in down.trials]
    assert up.direction == "maximize" and down.direction == "minimize"
    assert up.best_value == max(up.func_vals) == -down.best_value
    # near the maximum 0, and better than the initial design (the first 7 trials)
    assert up.best_value > max(-0.03, max(up.func_vals[:7]))
    assert up.best_params == down.best_params
    np.testing.assert_allclose(up.func_vals, [-quad(**t.params) for t in up.trials])
    trace = up.best_so_far()
    assert np.all(np.diff(trace) >= 0) and trace[-1] == up.best_value
    assert list(up.to_dataframe()["value"]) == list(up.func_vals)
    assert "direction='maximize'" in repr(up)


def test_values_stay_in_user_units_and_failures_are_worst(tmp_path):
    opt = Optimizer(SPACE, direction="maximize", random_state=0, n_initial=4)
    told = []
    for i in range(6):
        t = opt.ask()
        if i == 3:
            opt.tell(t, RuntimeError("diverged"))
        else:
            told.append(opt.tell(t, score(**t.params)))
    assert opt.direction == "maximize"
    assert [t.value for t in told] == [score(**t.params) for t in told]
    assert opt.best_trial.value == max(t.value for t in told)
    # the surrogate's observations are losses: the negated values, the failure the worst one
    values = np.array([t.value for t in told])
    y = opt._obs.y
    assert y[3] == -values.min() and np.allclose(np.delete(y, 3), -values)
    result = opt.result()
    assert result.best_trial.id == opt.best_trial.id and result.n_failed == 1
    fig = result.plot_convergence(tmp_path / "c.png")
    assert fig.axes[0].get_ylabel() == "best value so far" and (tmp_path / "c.png").exists()
    assert result.plot_evaluations().axes[0].get_ylabel() == "value"
    minimising = Optimizer(SPACE, random_state=0, n_initial=4)
    assert minimising.direction == "minimize"
    assert Optimizer(SPACE).result().plot_evaluations().axes[0].get_ylabel() == "loss"


def test_a_stored_study_keeps_its_direction(tmp_path):
    db = str(tmp_path / "s.db")
    first = mfbo.minimize(score, SPACE, n_calls=8, direction="maximize", storage=db,
                          random_state=0, progress_bar=False)
    again = Optimizer(SPACE, storage=db, direction="maximize", random_state=0)
    assert again.n_finished == 8 and again.best_trial.value == first.best_value
    np.testing.assert_allclose(again._obs.y, -first.func_vals)  # replayed as losses
    before = sqlite3.connect(db).execute("SELECT COUNT(*) FROM events").fetchone()
    for direction in ("minimize", None):
        kwargs = {} if direction is None else {"direction": direction}
        with pytest.raises(ValueError, match="created with direction='maximize'"):
            Optimizer(SPACE, storage=db, **kwargs)
        with pytest.raises(ValueError, match="direction='maximize'"):
            mfbo.minimize(score, SPACE, n_calls=10, storage=db, progress_bar=False, **kwargs)
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM events").fetchone() == before
    resumed = mfbo.minimize(score, SPACE, n_calls=12, direction="maximize", storage=db,
                            random_state=0, progress_bar=False)
    assert len(resumed.trials) == 12 and resumed.best_value >= first.best_value
    assert Study.open(db).direction == "maximize"


def test_a_study_stored_before_directions_minimises(tmp_path):
    db = str(tmp_path / "old.db")
    mfbo.minimize(quad, SPACE, n_calls=4, storage=db, random_state=0, progress_bar=False)
    con = sqlite3.connect(db)
    config = json.loads(con.execute("SELECT config FROM studies").fetchone()[0])
    del config["direction"]
    con.execute("UPDATE studies SET config = ?", (json.dumps(config),))
    con.commit()
    con.close()
    assert Optimizer(SPACE, storage=db).n_finished == 4
    with pytest.raises(ValueError, match="direction='minimize'"):
        Optimizer(SPACE, storage=db, direction="maximize")


@pytest.mark.parametrize("direction", ["max", "MAXIMIZE", None, 1])
def test_a_bad_direction_is_refused(direction):
    with pytest.raises(ValueError, match="direction must be 'minimize' or 'maximize'"):
        Optimizer(SPACE, direction=direction)
    with pytest.raises(ValueError, match="direction"):
        mfbo.minimize(quad, SPACE, n_calls=3, direction=direction, progress_bar=False)


P = [{"x": 0.1, "y": 0.2}, {"x": -0.5, "y": 0.5}, {"x": 0.3, "y": -0.2}]


def test_enqueued_configurations_come_first_in_order():
    opt = Optimizer(SPACE, random_state=0, n_initial=4)
    assert opt.enqueue(P[:2]) == 2 and opt.enqueue(P[2]) == 1
    assert opt.queued == P
    batch = opt.ask(4)
    assert [t.params for t in batch[:3]] == P and batch[3].params not in P
    assert opt.queued == []
    for t in batch:
        opt.tell(t, quad(**t.params))
    # enqueued trials count towards the initial design: the surrogate proposes from trial 4
    assert opt.n_initial == 4 and opt.best_trial.params == P[2]
    opt.enqueue(P[0])  # duplicates are evaluated again unless skip_existing
    assert opt.ask().params == P[0]
    assert opt.enqueue(P, skip_existing=True) == 0


def test_ask_hands_out_orphans_then_the_queue_then_proposals(tmp_path):
    db = str(tmp_path / "s.db")
    opt = Optimizer(SPACE, storage=db, random_state=0)
    orphan = opt.ask()
    opt.enqueue(P[:2])
    opt.close()  # its pending trial is an orphan now; the queue stays in the file
    again = Optimizer(SPACE, storage=db, random_state=0)
    assert again.queued == P[:2]
    trials = again.ask(3)
    assert trials[0].id == orphan.id and [t.params for t in trials[1:]] == P[:2]
    assert again.ask(max_trials=3) is None  # the queue counts towards max_trials


def test_the_queue_survives_a_restart_and_is_shared(tmp_path):
    db = str(tmp_path / "s.db")
    opt = Optimizer(SPACE, storage=db, random_state=0)
    opt.enqueue(P)
    t = opt.ask()
    opt.tell(t, quad(**t.params))
    opt.close()
    other = Optimizer(SPACE, storage=db, random_state=0)
    assert other.queued == P[1:]
    assert [t.params for t in other.ask(2)] == P[1:]
    # a second handle on the file sees the queue emptied by the first
    third = Optimizer(SPACE, storage=db, random_state=0)
    assert third.queued == [] and third.ask().params not in P
    assert Study.open(db).queued == []


def test_bad_configurations_record_nothing(tmp_path):
    db = str(tmp_path / "s.db")
    opt = Optimizer({"x": (-1.0, 1.0), "n": Integer(1, 3)}, storage=db)
    count = sqlite3.connect(db).execute("SELECT COUNT(*) FROM events").fetchone()[0]
    cases = [([{"x": 0.0, "n": 1}, {"x": 2.0, "n": 1}], ValueError, r"params\[1\].*'x'"),
             ({"x": 0.0}, ValueError, r"missing parameter.*'n'.*every parameter"),
             ({"x": 0.0, "n": 1, "z": 3}, ValueError, "unknown parameter"),
             ({"x": 0.0, "n": 1.5}, (TypeError, ValueError), "'n'"),
             ([{"x": 0.0, "n": 1}, 3], TypeError, r"params\[1\] must be a params dict"),
             ("x=0", TypeError, "params dict")]
    for bad, exc, match in cases:
        with pytest.raises(exc, match=match):
            opt.enqueue(bad)
    assert opt.queued == []
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM events").fetchone()[0] == count


def test_the_journal_of_a_queue_is_checked_on_replay():
    S = Space(SPACE)
    storage = InMemoryStorage()
    study = Study(SPACE, storage)
    storage.append("default", "enqueue", {"number": 0, "params": P[0], "time": 0.0})
    storage.append("default", "ask", {"id": 0, "params": P[0],
                                      "unit": S.to_unit([P[0]])[0].tolist(), "candidate": None,
                                      "owner": None, "time": 0.0, "enqueued": 0})
    study.refresh()
    assert study.queued == [] and study.trials[0].params == P[0]
    for payload, match in (({"id": 1, "params": P[1], "enqueued": 0}, "not in the queue"),
                           ({"number": 3, "params": P[1]}, "out of order")):
        storage = InMemoryStorage()
        storage.append("default", "enqueue", {"number": 0, "params": P[0], "time": 0.0})
        storage.append("default", "ask", {"id": 0, "params": P[0],
                                          "unit": S.to_unit([P[0]])[0].tolist(),
                                          "candidate": None, "owner": None, "time": 0.0,
                                          "enqueued": 0})
        kind = "ask" if "id" in payload else "enqueue"
        if kind == "ask":
            payload = {**payload, "unit": S.to_unit([P[1]])[0].tolist(), "candidate": None,
                       "owner": None, "time": 0.0}
        storage.append("default", kind, {**payload, "time": 0.0})
        with pytest.raises(ValueError, match=match):
            Study(SPACE, storage).refresh()


def test_enqueued_rows_of_a_candidate_set():
    grid = [{"x": x, "y": y} for x in (-0.5, 0.0, 0.5) for y in (-0.5, 0.0, 0.5)]
    opt = Optimizer(SPACE, candidates=grid, random_state=0)
    opt.enqueue([grid[4], {"x": 0.3, "y": -0.2}])  # a row of the set, and one outside it
    a, b = opt.ask(2)
    assert a.candidate == 4 and b.candidate is None
    for t in (a, b):
        opt.tell(t, quad(**t.params))
    rest = []
    while True:
        try:
            t = opt.ask()
        except mfbo.StudyExhausted:
            break
        rest.append(t.candidate)
        opt.tell(t, quad(**t.params))
    assert sorted(rest) == [i for i in range(9) if i != 4]  # row 4 is not proposed again


def test_minimize_initial_points(tmp_path):
    db = str(tmp_path / "s.db")
    r = mfbo.minimize(quad, SPACE, n_calls=6, initial_points=P, storage=db, random_state=0,
                      progress_bar=False)
    assert [t.params for t in r.trials[:3]] == P
    # the same call on the stored study resumes: the points are not evaluated twice
    r2 = mfbo.minimize(quad, SPACE, n_calls=9, initial_points=P, storage=db, random_state=0,
                       progress_bar=False)
    assert len(r2.trials) == 9 and sum(t.params in P for t in r2.trials) == 3
    with pytest.raises(ValueError, match=r"initial_points\[0\]"):
        mfbo.minimize(quad, SPACE, n_calls=5, initial_points=[{"x": 5.0, "y": 0.0}],
                      storage=str(tmp_path / "new.db"), progress_bar=False)
    assert not (tmp_path / "new.db").exists()  # refused before the study was created
    with pytest.raises(ValueError, match="more than n_calls"):
        mfbo.minimize(quad, SPACE, n_calls=2, initial_points=P, progress_bar=False)
    best = mfbo.minimize(quad, SPACE, n_calls=3, initial_points=[P[2]], random_state=0,
                         progress_bar=False)
    assert best.best_params == P[2] and np.isclose(best.best_value, 0.0)


def test_each_trial_records_what_proposed_it(tmp_path):
    """The origin of a trial: the design's and the policy's steps for proposals, "enqueued"
    for a queued configuration, None for one told with its params; kept by the journal and
    read back in the order the observations came (failures included)."""
    db = str(tmp_path / "origin.db")
    opt = Optimizer(SPACE, random_state=0, n_initial=4, storage=db)
    opt.enqueue({"x": 0.5, "y": 0.5})
    for _ in range(12):
        t = opt.ask()
        opt.tell(t, quad(**t.params) if t.id != 6 else float("nan"))
    opt.tell({"x": -0.25, "y": 0.75}, 1.0)
    origins = [t.origin for t in opt.trials]
    # (the enqueued trial is one of the first n_initial)
    assert origins[:4] == ["enqueued"] + ["design"] * 3 and origins[-1] is None
    steps = {"random", "plateau", "local", "parzen", "acquisition"}
    assert set(origins[4:-1]) <= steps and len(set(origins[4:-1])) >= 2
    assert opt.study.obs_origins == origins
    df = opt.result().to_dataframe()
    opt.close()
    again = Optimizer(SPACE, storage=db)
    assert [t.origin for t in again.trials] == origins
    assert again.study.obs_origins == origins
    assert [v if isinstance(v, str) else None for v in df["origin"]] == origins
    again.close()


def test_an_origin_that_is_not_a_string_is_refused_on_replay():
    storage = InMemoryStorage()
    storage.append("default", "ask", {**_ask(0, {"x": 0.1, "y": 0.2}), "origin": 3})
    with pytest.raises(ValueError, match="origin must be a string, got 3"):
        Study(SPACE, storage).refresh()


# -- intermediate values and pruned trials ----------------------------------------------------
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


def test_with_on_failure_infeasible_a_failure_is_a_row_of_its_nearest_complete_neighbour():
    storage = InMemoryStorage()
    Q = [{"x": 0.1, "y": 0.2}, {"x": -0.5, "y": 0.5}, {"x": 0.9, "y": 0.9}, {"x": 0.2, "y": 0.2},
         {"x": -0.4, "y": 0.4}]
    events = [("ask", _ask(0, Q[0])), ("tell", _tell(0, state="failed", error="oom")),
              ("ask", _ask(1, Q[1])), ("tell", _tell(1, 2.0)),
              ("ask", _ask(2, Q[2])), ("tell", _tell(2, 1.0)),
              ("ask", _ask(3, Q[3])), ("report", _report(3, 0, 7.0)),
              ("tell", _tell(3, state="pruned")),
              ("ask", _ask(4, Q[4])), ("tell", _tell(4, state="failed", error="oom"))]
    for kind, payload in events:
        storage.append("default", kind, payload)
    study = Study(SPACE, storage, on_failure="infeasible")
    study.refresh()
    assert study.n_outcomes == 2 and study.objectives.plain
    # the first failure, before any complete trial, is not fed; the pruned trial enters as
    # with "worst", and is no failure; the last failure takes the loss of trial 1, its
    # nearest complete neighbour
    np.testing.assert_array_equal(study.obs.Y, [[2.0, -1.0], [1.0, -1.0], [7.0, -1.0],
                                                [2.0, 1.0]])
    np.testing.assert_array_equal(study.obs.y, [2.0, 1.0, 7.0, 2.0])
    np.testing.assert_array_equal(study.obs.X, S.to_unit([Q[1], Q[2], Q[3], Q[4]]))
    assert study.best.id == 2
    worst = Study(SPACE, storage)
    worst.refresh()
    np.testing.assert_array_equal(worst.obs.y, [2.0, 1.0, 7.0, 7.0])
    # with constraints: the failure takes every outcome of its neighbour
    from mfbo.study.objectives import Objectives
    cons = InMemoryStorage()
    study = Study(SPACE, cons, objectives=Objectives.make(constraints=["c"]),
                  on_failure="infeasible")
    def told(i, value):
        return {**_tell(i, value), "values": [value], "constraints": [value - 1.5]}
    for kind, payload in [("ask", _ask(0, Q[1])), ("tell", told(0, 2.0)),
                          ("ask", _ask(1, Q[2])), ("tell", told(1, 1.0)),
                          ("ask", _ask(2, Q[4])), ("tell", _tell(2, state="failed"))]:
        cons.append("default", kind, payload)
    study.refresh()
    np.testing.assert_array_equal(study.obs.Y, [[2.0, 0.5, -1.0], [1.0, -0.5, -1.0],
                                                [2.0, 0.5, 1.0]])


def test_a_bad_on_failure_is_refused_naming_it(tmp_path):
    db = tmp_path / "s.db"
    for make in (lambda: Study(SPACE, str(db), on_failure="crash"),
                 lambda: Optimizer(SPACE, storage=str(db), on_failure="crash")):
        with pytest.raises(ValueError, match=r"on_failure must be one of \[.*'worst', "
                                             r"'ignore', 'infeasible'\], got 'crash'"):
            make()
    assert not db.exists()  # nothing was created

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
    failed = opt.ask()
    assert opt.tell(failed, state="failed").error == "told failed"
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
        # the plain model of the journal reads the same trials
        model = replay(list(fresh.storage.read("default", 0)))
        assert [(t.state, t.value, t.reports, t.rungs) for t in model.trials] == \
            [(t.state, t.value, t.intermediate_values, t.rungs) for t in fresh.trials]
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
