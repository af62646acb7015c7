"""Regression tests built from the reproducers of a hostile-user review: each test is one
defect that once lost, corrupted or silently falsified a study."""

import json
import sqlite3

import numpy as np
import pytest

import mfbo
from mfbo import Categorical, Integer, Optimizer
from tests.support import BOX as S, box_quad as f


def test_batch_ask_after_a_batch_neither_hangs_nor_crashes(tmp_path, python_run):
    # ask(11) after ask(10) used to write past the copied tree store's node arrays: it hung in
    # restat_regression (holding the SQLite write lock) or raised a broadcast error
    proc = python_run(f"""
        import mfbo
        S = {S!r}
        f = lambda x, y: (x - 1) ** 2 + (y - 2) ** 2
        for seed in range(4):
            storage = {str(tmp_path / 'b.db')!r} if seed == 0 else None
            opt = mfbo.Optimizer(S, random_state=seed, storage=storage)
            for n in (10, 11, 16):
                batch = opt.ask(n)
                assert len({{tuple(t.params.values()) for t in batch}}) == n
                for t in batch:
                    opt.tell(t, f(**t.params))
            assert opt.n_finished == 37 and not opt.pending
        print("ok")
        """, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


@pytest.mark.parametrize("durable", [False, True])
def test_an_ask_that_raises_leaves_no_phantom_trials(tmp_path, monkeypatch, durable):
    db = str(tmp_path / "p.db") if durable else None
    opt = Optimizer(S, random_state=0, storage=db, n_initial=3)
    for t in opt.ask(3):
        opt.tell(t, f(**t.params))
    kept = opt.ask()  # a pending trial from before must stay pending
    boom = RuntimeError("surrogate failed")

    def fail(U):
        raise boom
    monkeypatch.setattr(opt.model, "predict", fail)
    with pytest.raises(RuntimeError, match="surrogate failed"):
        opt.ask(4)
    assert [t.id for t in opt.pending] == [kept.id] and opt.n_trials == 4
    monkeypatch.undo()
    batch = opt.ask(2)  # later asks work and number the trials on
    assert [t.id for t in batch] == [4, 5]
    if durable:
        # the write lock was released and the journal holds no phantom trial
        sqlite3.connect(db, timeout=1).execute("BEGIN IMMEDIATE").execute("ROLLBACK")
        again = Optimizer(S, storage=db, random_state=0)
        assert again.n_trials == 6 and sorted(t.id for t in again.pending) == [3, 4, 5]


def test_a_tell_that_fails_in_the_storage_is_not_half_recorded(monkeypatch):
    opt = Optimizer(S, random_state=0)
    t = opt.ask()
    real_append = opt.storage.append

    def append(study, kind, payload):
        real_append(study, kind, payload)
        raise OSError("disk full")
    monkeypatch.setattr(opt.storage, "append", append)
    with pytest.raises(OSError):
        opt.tell(t, 1.0)
    monkeypatch.undo()
    assert opt.n_finished == 0 and [p.id for p in opt.pending] == [t.id]
    opt.tell(t, 1.0)
    assert opt.n_finished == 1


@pytest.mark.parametrize("surrogate,options", [
    ("mondrian", {}), ("mondrian", {"y_transform": "smac-log"}),
    ("mondrian", {"y_transform": "rank"}), ("mondrian", {"y_transform": None}),
    ("mondrian", {"posterior": "bp"}), ("rf-smac", {})])
@pytest.mark.parametrize("huge", [1.7e308, -1.7e308])
def test_a_huge_finite_loss_does_not_brick_the_study(tmp_path, surrogate, options, huge):
    db = str(tmp_path / "big.db")
    kw = dict(surrogate=surrogate, storage=db, random_state=0, n_initial=2,
              surrogate_options=options or None)
    opt = Optimizer(S, **kw)
    opt.tell(opt.ask(), 1.0)
    opt.tell(opt.ask(), huge)
    opt.tell(opt.ask(), 3.0)
    opt.tell(opt.ask(), -huge)
    t = opt.ask()  # a model-based proposal on these losses
    opt.tell(t, 2.0)
    again = Optimizer(S, **kw)  # replay feeds the same losses to a new model
    assert again.n_finished == 5 and again.best_trial.value == -abs(huge)
    m, s = again.model.predict(np.array([[0.5, 0.5], [0.1, 0.9]]))
    assert np.isfinite(m).all() and np.isfinite(s).all()
    again.tell(again.ask(), 0.5)


def test_ask_hands_out_copies():
    opt = Optimizer({"x": (0.0, 1.0), "i": Integer(0, 5)}, random_state=0)
    q = opt.ask()
    q.params["i"] = 99
    with pytest.raises(ValueError, match="differ"):
        opt.tell(q, 1.0)
    q = opt.ask()
    good = dict(q.params)
    q.unit[:] = 0.0
    told = opt.tell(q.id, 0.5)
    told.params["x"] = -3.0
    opt.best_trial.params["i"] = 42
    opt.pending[0].params["i"] = 77
    res = opt.result()
    res.trials[1].params["x"] = 7.0
    assert opt.result().best_params == good
    assert opt.trials[0].params != {"x": opt.trials[0].params["x"], "i": 99}
    assert all(0 <= t.params["i"] <= 5 for t in opt.trials)


def _study_with_rows(tmp_path, *rows):
    tmp_path.mkdir(parents=True, exist_ok=True)
    db = str(tmp_path / "j.db")
    opt = Optimizer(S, storage=db, random_state=0)
    for _ in range(3):
        t = opt.ask()
        opt.tell(t, f(**t.params))
    opt.close()
    conn = sqlite3.connect(db)
    for kind, payload in rows:
        conn.execute("INSERT INTO events (study, kind, payload, time) VALUES (?, ?, ?, 0)",
                     ("default", kind, payload if isinstance(payload, str) else
                      json.dumps(payload)))
    conn.commit()
    conn.close()
    return db


def _ask(i, params, unit=None):
    u = mfbo.Space(S).to_unit([params])[0].tolist() if unit is None else unit
    return "ask", {"id": i, "params": params, "unit": u, "candidate": None, "owner": None,
                   "time": 0.0}


def _tell(i, value=1.0, state="complete"):
    return "tell", {"id": i, "state": state, "value": value, "extra": {}, "error": None,
                    "start": None, "end": 1.0, "worker": None}


@pytest.mark.parametrize("rows,match", [
    ([_ask(3, {"x": 1e6, "y": "hello"}, unit=[0.5, 0.5])], "outside|must be a real"),
    ([_ask(3, {"x": 1.0, "y": 2.0}, unit=[0.4])], "unit cube with 2"),
    ([_ask(3, {"x": 1.0, "y": 2.0}, unit=[0.9, 0.9])], "does not encode"),
    ([_tell(2)], "already told"),
    ([_ask(7, {"x": 1.0, "y": 2.0})], "out of order"),
    ([_ask(3, {"x": 1.0, "y": 2.0}), _tell(3, value=float("nan"))], "finite"),
    ([_ask(3, {"x": 1.0, "y": 2.0}), _tell(3, state="done")], "state"),
    ([_tell(99)], "no trial with id 99"),
    ([("claim", {"id": 0, "owner": "h:1:2:t"})], "already told"),
    ([_ask(3, {"x": 1.0, "y": 2.0}), ("tell", {"id": 3})], "'state'"),
    ([("ask", [1, 2, 3])], "JSON object"),
    ([("frobnicate", {})], "unknown kind"),
    ([("ask", "{not json")], "not valid JSON"),
    # an integer too large for a float, a 5,000-digit integer, a huge trial id
    ([("ask", '{"id":3,"params":{"x":1%s,"y":2.0},"unit":[0.5,0.5],"candidate":null,'
       '"owner":null,"time":0}' % ("0" * 400))], "too large"),
    ([("tell", '{"id":2,"state":"complete","value":1%s,"extra":{},"error":null,"start":null,'
       '"end":1,"worker":null}' % ("0" * 5000))], "not valid JSON"),
    ([("ask", '{"id":1%s,"params":{"x":1,"y":2.0},"unit":[0.5,0.5],"candidate":null,'
       '"owner":null,"time":0}' % ("0" * 400))], r"trial id 10+\.\.\. out of order"),
])
def test_replay_refuses_bad_rows_naming_them(tmp_path, rows, match):
    db = _study_with_rows(tmp_path, *rows)
    with pytest.raises(ValueError, match=match) as info:
        Optimizer(S, storage=db)
    assert f"event {6 + len(rows)}" in str(info.value)


def test_damaged_nesting_and_stored_settings_are_named(tmp_path):
    # these used to escape as RecursionError, AttributeError or TypeError tracebacks
    from mfbo.study.study import Study

    db = _study_with_rows(tmp_path, ("ask", "[" * 100000 + "]" * 100000))
    for opening in (lambda: Optimizer(S, storage=db), lambda: Study.open(db)):
        with pytest.raises(ValueError, match="nested too deeply.*damaged"):
            opening()
    for column, text, match in [("config", "[1, 2]", "settings"), ("space", "[1, 2]", "space"),
                                ("space", '{"x": [1]}', "space")]:
        db = _study_with_rows(tmp_path / f"{column}{len(text)}")
        conn = sqlite3.connect(db)
        conn.execute(f"UPDATE studies SET {column} = ?", (text,))
        conn.commit()
        conn.close()
        with pytest.raises(ValueError, match=f"stored {match}.*damaged"):
            Study.open(db)
        if column == "config":
            with pytest.raises(ValueError, match="stored settings are not a JSON object"):
                Optimizer(S, storage=db)


def test_replay_order_check_survives_python_O(tmp_path, python_run):
    db = _study_with_rows(tmp_path, _ask(5, {"x": 1.0, "y": 2.0}))
    proc = python_run(f"""
        import mfbo
        try:
            mfbo.Optimizer({S!r}, storage={db!r})
        except ValueError as exc:
            print("refused:", exc)
        """, 120, "-O")
    assert "refused:" in proc.stdout and "out of order" in proc.stdout, proc.stderr


@pytest.mark.parametrize("kwargs,exc,match", [
    ({"kappa": "1"}, TypeError, "kappa"), ({"xi": float("nan")}, ValueError, "xi"),
    ({"random_state": -1}, ValueError, "random_state"),
    ({"random_state": "seed"}, TypeError, "random_state"),
])
def test_optimizer_arguments_are_named(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Optimizer(S, **kwargs)


def test_tell_refuses_non_finite_times():
    opt = Optimizer(S, random_state=0)
    t = opt.ask()
    for kw in ({"end": float("nan")}, {"start": float("inf")}):
        with pytest.raises(ValueError, match="time stamp"):
            opt.tell(t, 1.0, **kw)
    assert opt.n_finished == 0


def test_callbacks_may_be_one_function_and_bad_ones_are_named():
    seen = []
    mfbo.minimize(f, S, n_calls=3, random_state=0, progress_bar=False,
                  callbacks=lambda t, o: seen.append(t.id))
    assert seen == [0, 1, 2]
    with pytest.raises(TypeError, match="callbacks"):
        mfbo.minimize(f, S, n_calls=3, progress_bar=False, callbacks=5)


def test_resuming_with_another_surrogate_warns(tmp_path):
    db = str(tmp_path / "s.db")
    Optimizer(S, storage=db, surrogate="mondrian")
    with pytest.warns(UserWarning, match="surrogate='mondrian'.*surrogate='rf-smac'"):
        Optimizer(S, storage=db, surrogate="rf-smac")


@pytest.mark.parametrize("durable", [False, True])
def test_threads_share_one_optimizer(tmp_path, python_run, durable):
    # four threads asking and telling through one optimizer used to mix the surrogate's
    # sample counts, write journal events out of order and crash the interpreter; it runs in
    # a subprocess so that a crash fails this test instead of ending the test run
    storage = repr(str(tmp_path / "t.db")) if durable else "None"
    proc = python_run(f"""
        import json, threading
        import mfbo
        S = {{"x": (-5.0, 10.0), "y": (0.0, 15.0), "z": (0.0, 1.0)}}
        opt = mfbo.Optimizer(S, random_state=0, storage={storage}, n_initial=4)
        errors = []

        def work():
            try:
                for _ in range(12):
                    t = opt.ask()
                    opt.tell(t, (t.params["x"] - 1) ** 2 + t.params["y"] + t.params["z"])
                batch = opt.ask(2)
                for t in batch:
                    opt.tell(t, 1.0)
                opt.result()
            except Exception as exc:
                errors.append(repr(exc))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        events = opt.storage.read("default", 0)
        print(json.dumps({{"errors": errors, "n": opt.n_finished,
                          "seen": opt.model.forest.n_samples_seen_,
                          "events": [[k, p["id"]] for _, k, p in events]}}))
    """, 600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["errors"] == [] and out["n"] == 4 * 14 and out["seen"] == 4 * 14
    asks = [i for k, i in out["events"] if k == "ask"]
    tells = [i for k, i in out["events"] if k == "tell"]
    assert asks == list(range(56)) and sorted(tells) == asks  # each asked once, told once


def test_reopening_with_candidates_in_another_order_names_it(tmp_path):
    import pandas as pd

    rows = pd.DataFrame({"x": np.linspace(-5, 10, 12), "y": np.linspace(0, 15, 12)})
    db = str(tmp_path / "c.db")
    opt = Optimizer(S, candidates=rows, storage=db, random_state=0, n_initial=2)
    for _ in range(3):
        t = opt.ask()
        opt.tell(t, f(**t.params))
    opt.close()
    with pytest.raises(ValueError, match="same rows in another order|another order"):
        Optimizer(S, candidates=rows.iloc[::-1], storage=db)
    with pytest.raises(ValueError, match="differ from the study's"):
        Optimizer(S, candidates=rows.assign(x=rows["x"] / 2), storage=db)
    assert Optimizer(S, candidates=rows, storage=db).n_finished == 3


def test_enqueue_takes_a_dataframe():
    import pandas as pd

    opt = Optimizer(S, random_state=0)
    frame = pd.DataFrame({"x": [1.0, 2.0], "y": [3.0, 4.0]})
    assert opt.enqueue(frame) == 2
    assert [opt.ask().params for _ in range(2)] == [{"x": 1.0, "y": 3.0}, {"x": 2.0, "y": 4.0}]
    with pytest.raises(ValueError, match=r"params\[0\].*'y'"):
        opt.enqueue(pd.DataFrame({"x": [1.0]}))


def test_running_out_of_room_under_min_distance_is_named_as_such():
    # a continuous space used to say "every candidate has been evaluated or is pending"
    opt = Optimizer({"x": (0.0, 1.0)}, random_state=0, min_distance=0.9, surrogate="random")
    with pytest.raises(mfbo.StudyExhausted, match="no point at least min_distance=0.9"):
        for _ in range(5):
            opt.tell(opt.ask(), 1.0)
    grid = Optimizer({"c": Categorical(["a", "b"])}, random_state=0)
    with pytest.raises(mfbo.StudyExhausted, match="every candidate"):
        for _ in range(3):
            grid.tell(grid.ask(), 1.0)


def test_study_open_creates_nothing_and_writes_nothing(tmp_path):
    from mfbo.study.study import Study

    with pytest.raises(FileNotFoundError, match="no study file"):
        Study.open(tmp_path / "mistyped.db")
    assert not list(tmp_path.iterdir())
    db = str(tmp_path / "s.db")
    mfbo.minimize(f, S, n_calls=3, storage=db, random_state=0, surrogate="random",
                  progress_bar=False)
    conn = sqlite3.connect(db)
    before = conn.execute("SELECT COUNT(*) FROM heartbeats").fetchone()[0]
    study = Study.open(db)
    assert study.n_finished == 3 and getattr(study.storage, "read_only", False)
    assert conn.execute("SELECT COUNT(*) FROM heartbeats").fetchone()[0] == before
    conn.close()
