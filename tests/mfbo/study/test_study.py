"""The study alone: a journal replayed into trials and observation arrays, with no model and no
proposal policy; its direction (``direction="maximize"``: the surrogate minimises the negated
values, everything the user sees is in the objective's own units, a stored study keeps its
direction); and its queue (``Optimizer.enqueue``, ``minimize(initial_points=...)``:
configurations asked first, in order, checked before anything is recorded, durable in a
stored study)."""

import json
import sqlite3
import warnings

import numpy as np
import pytest

import mfbo
from mfbo import InMemoryStorage, Integer, Optimizer, Space, Study
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
