"""Optimizer.enqueue and minimize(initial_points=...): configurations asked first, in order,
checked before anything is recorded, and durable in a stored study."""

import sqlite3

import numpy as np
import pytest

import mfbo
from mfbo import InMemoryStorage, Integer, Optimizer, Space, Study

from tests.support import SPACE, quad

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
