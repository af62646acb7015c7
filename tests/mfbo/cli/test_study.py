"""``mfbo study show|export|best``: a study file read without being changed."""

import csv
import io
import json
import random
import sqlite3
import subprocess
import sys

import pandas as pd
import pytest

import mfbo
from mfbo.cli import study as study_command
from mfbo.cli.main import main
from mfbo.storage import SQLiteStorage

from tests.support import ROOT, SPACE, checkout_env, quad, run_mfbo


def flaky(x, y):
    if x > 0.6:
        raise RuntimeError("diverged")
    return {"loss": quad(x, y), "note": "ok"}


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "studies.db"
    mfbo.minimize(flaky, SPACE, n_calls=12, storage=str(path), random_state=0,
                  progress_bar=False, study_name="losses")
    mfbo.minimize(lambda x, y: 1 - quad(x, y), SPACE, n_calls=6, storage=str(path),
                  random_state=1, progress_bar=False, study_name="scores",
                  direction="maximize")
    opt = mfbo.Optimizer(SPACE, storage=str(path), study_name="waiting")
    opt.enqueue({"x": 0.0, "y": 0.0})
    opt.ask(2)  # the queued one and a proposal, pending
    opt.close()
    return path


def _digest(path) -> list:
    con = sqlite3.connect(path)
    try:
        return [con.execute(f"SELECT * FROM {table}").fetchall()
                for table in ("studies", "events")]
    finally:
        con.close()


def test_show(db, capsys):
    before = _digest(db)
    assert main(["study", "show", str(db)]) == 0
    out = capsys.readouterr().out
    losses = mfbo.Study.open(str(db), "losses")
    failed = sum(t.state == "failed" for t in losses.trials)
    assert "study 'losses'" in out and "study 'scores'" in out and "study 'waiting'" in out
    assert f"12 ({12 - failed} complete, {failed} failed, 0 pending)" in out
    assert "direction   maximize" in out and "2 (0 complete, 0 failed, 2 pending)" in out
    assert f"best value  {losses.best.value:.10g} (trial {losses.best.id})" in out
    assert main(["study", "show", f"sqlite:///{db}", "--study", "scores"]) == 0
    out = capsys.readouterr().out
    assert "study 'scores'" in out and "losses" not in out
    assert _digest(db) == before  # read-only


def test_export(db, tmp_path, capsys):
    out_csv = tmp_path / "trials.csv"
    assert main(["study", "export", str(db), "--study", "losses", "--csv", str(out_csv)]) == 0
    assert "12 trials of study 'losses'" in capsys.readouterr().out
    df = pd.read_csv(out_csv)
    assert list(df.columns[:5]) == ["id", "state", "value", "x", "y"]
    assert {"start", "end", "worker", "error", "note"} <= set(df.columns)
    result = mfbo.Optimizer(SPACE, storage=str(db), study_name="losses").result()
    assert list(df["id"]) == list(range(12))
    pd.testing.assert_series_equal(df["value"], pd.Series(
        [t.value for t in result.trials], dtype=float), check_names=False)
    assert list(df["state"]) == [t.state for t in result.trials]
    assert main(["study", "export", str(db), "--study", "waiting", "--csv", "-"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("id,state,value,x,y") and len(lines) == 3


def test_best(db, capsys):
    assert main(["study", "best", str(db), "--study", "scores"]) == 0
    scores = mfbo.Study.open(str(db), "scores")
    assert json.loads(capsys.readouterr().out) == scores.best.params
    assert scores.best.value == max(t.value for t in scores.trials)


def test_errors_are_one_line_and_exit_code_2(db, tmp_path, capsys):
    cases = [(["show", str(tmp_path / "missing.db")], "no study file"),
             (["show", str(tmp_path)], "is a directory"),
             (["show", str(db), "--study", "nope"],
              "no study named 'nope'.*'losses', 'scores', 'waiting'"),
             (["best", str(db)], "holds 3 studies.*--study"),
             (["best", str(db), "--study", "waiting"], "no complete trial"),
             (["export", str(db), "--study", "losses", "--csv",
               str(tmp_path / "no" / "t.csv")], "does not exist"),
             (["export", str(db), "--study", "losses", "--csv", str(tmp_path)],
              "--csv .* is a directory")]
    for argv, match in cases:
        assert main(["study", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("mfbo study: error:") and len(err.strip().splitlines()) == 1
        assert pytest.importorskip("re").search(match, err), (argv, err)
    (tmp_path / "junk.db").write_bytes(b"not a database at all" * 100)
    assert main(["study", "show", str(tmp_path / "junk.db")]) == 2
    assert "not a readable mfbo study database" in capsys.readouterr().err


def test_a_study_of_a_candidate_set_is_read_by_its_row_numbers(tmp_path, capsys):
    db = str(tmp_path / "grid.db")
    grid = pd.DataFrame({"x": [-0.5, 0.0, 0.5, 0.3], "y": [0.0, 0.5, -0.5, -0.2]})
    mfbo.minimize(quad, SPACE, n_calls=4, candidates=grid, storage=db, random_state=0,
                  progress_bar=False)
    assert main(["study", "best", db]) == 0
    assert json.loads(capsys.readouterr().out) == {"x": 0.3, "y": -0.2}


def test_the_command_is_registered():
    proc = run_mfbo("study", "--help", timeout=120)
    assert proc.returncode == 0 and "show" in proc.stdout and "export" in proc.stdout, \
        proc.stderr[-2000:]


def _strict_json(text: str):
    """``text`` parsed as JSON proper: NaN, Infinity and -Infinity are refused."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


def write_study(path, n: int, name: str = "big", direction: str = "maximize") -> None:
    """A study of ``n`` trials written straight into the journal (one transaction, no
    optimizer): a few enqueued configurations (some asked, some still queued), trials told
    out of order, failed ones, pending ones, claimed ones, and tied values."""
    space = mfbo.Space({"x": (-1.0, 1.0), "k": (1, 100), "c": ["a", "b", "c"]})
    rng = random.Random(0)
    storage = SQLiteStorage(str(path))
    storage.open_study(name, space.to_json(), {"surrogate": "mondrian", "direction": direction,
                                               "n_candidates": None})
    with storage.transaction(name):
        queued = []
        for number in range(5):
            queued.append({"x": number / 10, "k": number + 1, "c": "b"})
            storage.append(name, "enqueue", {"number": number, "params": queued[-1],
                                             "time": 1.0})
        untold = []
        for i in range(n):
            taken = {"enqueued": i} if i < 3 else {}
            params = queued[i] if i < 3 else {"x": rng.uniform(-1, 1), "k": rng.randint(1, 100),
                                              "c": rng.choice("abc")}
            storage.append(name, "ask", {"id": i, "params": params,
                                         "unit": space.to_unit([params])[0].tolist(),
                                         "candidate": None, "owner": "o1", "time": 10.0 + i,
                                         **taken})
            untold.append(i)
            if i % 13 == 5:
                storage.append(name, "claim", {"id": i, "owner": "o2"})
            while len(untold) > 4 or (i == n - 1 and len(untold) > 2):
                j = untold.pop(rng.randrange(len(untold)))
                if j % 11 == 10:
                    continue  # stays pending
                failed = j % 7 == 3
                value = None if failed else round(rng.uniform(0, 5), 1)  # ties
                storage.append(name, "tell", {
                    "id": j, "state": "failed" if failed else "complete", "value": value,
                    "extra": {"note": j}, "error": "RuntimeError: boom" if failed else None,
                    "start": 10.0 + j, "end": 11.0 + j, "worker": "w"})
    storage.close()


def test_show_and_best_summarise_a_many_trial_study_read_a_page_at_a_time(tmp_path, capsys,
                                                                         monkeypatch):
    db = tmp_path / "big.db"
    write_study(db, 3000)
    write_study(db, 40, name="small", direction="minimize")
    from mfbo.storage import base
    monkeypatch.setattr(base, "PAGE", 97)  # many pages, none aligned with a trial
    expected = []
    for name in ("big", "small"):
        study = mfbo.Study.open(SQLiteStorage(str(db), read_only=True), name)
        states = {s: sum(t.state == s for t in study.trials)
                  for s in ("complete", "failed", "pending")}
        assert min(states.values()) > 0 and len(study.queued) == 2
        expected.append("\n".join([
            f"study {name!r}",
            f"  direction   {study.direction}",
            "  surrogate   mondrian",
            "  parameters  x, k, c",
            f"  trials      {len(study.trials)} ({states['complete']} complete, "
            f"{states['failed']} failed, {states['pending']} pending)",
            "  queued      2 configuration(s) not yet asked",
            f"  best value  {study.best.value:.10g} (trial {study.best.id})",
            f"  best params {json.dumps(study.best.params)}"]))
    assert main(["study", "show", str(db)]) == 0
    assert capsys.readouterr().out == "\n\n".join(expected) + "\n"
    big = mfbo.Study.open(SQLiteStorage(str(db), read_only=True), "big")
    assert sum(t.value == big.best.value for t in big.trials) > 1  # the first of ties wins
    assert main(["study", "best", str(db), "--study", "big"]) == 0
    assert _strict_json(capsys.readouterr().out) == big.best.params
    # export replays every trial from the same pages
    out_csv = tmp_path / "big.csv"
    assert main(["study", "export", str(db), "--study", "big", "--csv", str(out_csv)]) == 0
    df = pd.read_csv(out_csv)
    assert list(df["id"]) == [t.id for t in big.trials]
    assert list(df["state"]) == [t.state for t in big.trials]
    assert list(df["x"]) == [t.params["x"] for t in big.trials]
    assert list(df["note"].fillna(-1)) == [t.extra.get("note", -1) for t in big.trials]


def test_show_refuses_a_damaged_journal_naming_the_event(tmp_path, capsys):
    db = tmp_path / "damaged.db"
    write_study(db, 30)
    con = sqlite3.connect(db)
    with con:
        eid = con.execute("SELECT min(id) FROM events WHERE kind = 'tell'").fetchone()[0]
        con.execute("UPDATE events SET payload = json_set(payload, '$.state', 'won') "
                    "WHERE id = ?", (eid,))
    con.close()
    for command in ("show", "best"):
        assert main(["study", command, str(db)]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1
        assert f"journal event {eid} ('tell') is invalid" in err and "'won'" in err, err


def test_export_keeps_parameters_and_extra_fields_named_like_its_columns(tmp_path, capsys):
    db = str(tmp_path / "clash.db")
    opt = mfbo.Optimizer({"value": (0.0, 1.0), "state": ["on", "off"], "x": (0.0, 1.0)},
                         storage=db, study_name="clash")
    for i in range(3):
        opt.tell({"value": i / 4, "state": "on", "x": 0.5},
                 {"loss": 10.0 + i, "value": f"v{i}", "x": f"x{i}", "error": f"e{i}"})
    opt.close()
    out_csv = tmp_path / "clash.csv"
    assert main(["study", "export", db, "--csv", str(out_csv)]) == 0
    header = out_csv.read_text().splitlines()[0].split(",")
    assert header == ["id", "state", "value", "param_value", "param_state", "x", "asked_at",
                      "start", "end", "duration", "worker", "origin", "error", "extra_value",
                      "extra_x", "extra_error"]
    df = pd.read_csv(out_csv)
    assert list(df["value"]) == [10.0, 11.0, 12.0]
    assert list(df["param_value"]) == [0.0, 0.25, 0.5]
    assert list(df["param_state"]) == ["on"] * 3 and list(df["x"]) == [0.5] * 3
    assert list(df["state"]) == ["complete"] * 3 and df["error"].isna().all()
    assert list(df["extra_value"]) == ["v0", "v1", "v2"]
    assert list(df["extra_x"]) == ["x0", "x1", "x2"]
    assert list(df["extra_error"]) == ["e0", "e1", "e2"]


def test_best_and_show_print_strict_json_for_non_finite_parameters(tmp_path, capsys):
    db = str(tmp_path / "nan.db")
    opt = mfbo.Optimizer({"c": mfbo.Categorical([float("nan"), float("-inf"), 1.0]),
                          "x": (0.0, 1.0)}, storage=db)
    opt.tell({"c": float("nan"), "x": 0.25}, 0.5)
    opt.tell({"c": float("-inf"), "x": 0.5}, 1.5)
    opt.close()
    assert main(["study", "best", db]) == 0
    assert _strict_json(capsys.readouterr().out) == {"c": None, "x": 0.25}
    assert main(["study", "show", db]) == 0
    (line,) = [s for s in capsys.readouterr().out.splitlines() if "best params" in s]
    assert _strict_json(line.split("best params", 1)[1]) == {"c": None, "x": 0.25}


def test_output_into_a_closed_pipe_ends_quietly_with_exit_code_1(tmp_path):
    db = tmp_path / "big.db"
    write_study(db, 3000)  # an export far longer than a pipe holds
    # the reader keeps the first line of the export (`| head -1`), or none of the short
    # output of best (the interpreter's final flush meets the closed pipe)
    for command, lines in ((["export", str(db), "--csv", "-"], 1), (["best", str(db)], 0)):
        proc = subprocess.Popen([sys.executable, "-m", "mfbo", "study", *command], cwd=ROOT,
                                env=checkout_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            if lines:
                assert proc.stdout.readline().startswith("id,state,value,x,k,c,")
            proc.stdout.close()
            err = proc.stderr.read()
            assert proc.wait(timeout=300) == 1, (command, err)
        finally:
            proc.kill()
            proc.wait()
        assert err == "", (command, err)


#: a conditional space: C and kernel in branch svm, degree under kernel poly (5 forbidden),
#: n in branch rf
CONDITIONAL = mfbo.Space({"model": ["svm", "rf"],
                          "C": mfbo.Real(1e-3, 1e3, log=True, when={"model": "svm"}),
                          "kernel": mfbo.Categorical(["rbf", "poly"], when={"model": "svm"}),
                          "degree": mfbo.Integer(2, 5, when={"kernel": "poly"}),
                          "n": mfbo.Integer(10, 500, step=10, when={"model": "rf"})},
                         forbidden=[{"kernel": "poly", "degree": 5}])


def write_conditional_study(path, name: str, direction: str) -> None:
    """Three trials of :data:`CONDITIONAL`, one per branch, written straight into the
    journal; the rf one records its inactive parameters as null, as a DataFrame row has
    them."""
    storage = SQLiteStorage(str(path))
    storage.open_study(name, CONDITIONAL.to_json(), {"surrogate": "mondrian",
                                                     "direction": direction})
    trials = [({"model": "svm", "C": 1.0, "kernel": "poly", "degree": 3}, 0.7),
              ({"model": "rf", "C": None, "kernel": None, "degree": None, "n": 120}, 0.2),
              ({"model": "svm", "C": 10.0, "kernel": "rbf"}, 0.5)]
    with storage.transaction(name):
        for i, (params, value) in enumerate(trials):
            unit = CONDITIONAL.to_unit([params])[0].tolist()
            storage.append(name, "ask", {"id": i, "params": params, "unit": unit,
                                         "candidate": None, "owner": "o", "time": 1.0 + i})
            storage.append(name, "tell", {"id": i, "state": "complete", "value": value,
                                          "extra": {}, "error": None, "start": 1.0 + i,
                                          "end": 1.5 + i, "worker": "w"})
    storage.close()


def test_a_conditional_study_is_shown_exported_and_summarised(tmp_path, capsys):
    db = str(tmp_path / "conditional.db")
    write_conditional_study(db, "low", "minimize")
    write_conditional_study(db, "high", "maximize")
    assert main(["study", "show", db, "--study", "low"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "study 'low'",
        "  direction   minimize",
        "  surrogate   mondrian",
        "  parameters  model, C, kernel, degree, n",
        "  active when C: Equals('model', 'svm')",
        "              kernel: Equals('model', 'svm')",
        "              degree: Equals('kernel', 'poly')",
        "              n: Equals('model', 'rf')",
        "  forbidden   AllOf(Equals('kernel', 'poly'), Equals('degree', 5))",
        "  trials      3 (3 complete, 0 failed, 0 pending)",
        "  best value  0.2 (trial 1)",
        '  best params {"model": "rf", "n": 120}']
    # the best parameters are the active ones, never a null for an inactive one
    for name, best in [("low", {"model": "rf", "n": 120}),
                       ("high", {"model": "svm", "C": 1.0, "kernel": "poly", "degree": 3})]:
        assert main(["study", "best", db, "--study", name]) == 0
        assert _strict_json(capsys.readouterr().out) == best
    # an inactive cell is empty; an integer parameter is written as an integer
    assert main(["study", "export", db, "--study", "low", "--csv", "-"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0][:8] == ["id", "state", "value", "model", "C", "kernel", "degree", "n"]
    assert [r[:8] for r in rows[1:]] == [["0", "complete", "0.7", "svm", "1.0", "poly", "3", ""],
                                         ["1", "complete", "0.2", "rf", "", "", "", "120"],
                                         ["2", "complete", "0.5", "svm", "10.0", "rbf", "", ""]]
    out_csv = tmp_path / "low.csv"
    assert main(["study", "export", db, "--study", "low", "--csv", str(out_csv)]) == 0
    df = pd.read_csv(out_csv)
    assert df["C"].isna().tolist() == [False, True, False]
    assert df["degree"].isna().tolist() == [False, True, True] and df["degree"][0] == 3
    assert df["n"].isna().tolist() == [True, False, True] and df["n"][1] == 120


def test_show_and_export_count_pruned_trials(tmp_path, capsys):
    db = str(tmp_path / "p.db")
    opt = mfbo.Optimizer(SPACE, surrogate="random", storage=db, random_state=0)
    for i in range(4):
        t = opt.ask()
        opt.report(t, 0, float(i))
        opt.tell(t, state="pruned") if i % 2 else opt.tell(t, float(i))
    opt.close()
    assert main(["study", "show", db]) == 0
    out = capsys.readouterr().out
    assert "trials      4 (2 complete, 2 pruned, 0 failed, 0 pending)" in out
    csv_path, reports = tmp_path / "p.csv", tmp_path / "r.csv"
    assert main(["study", "export", db, "--csv", str(csv_path)]) == 0
    assert pd.read_csv(csv_path)["state"].tolist() == ["complete", "pruned"] * 2
    assert main(["study", "export", db, "--csv", str(csv_path), "--intermediate",
                 str(reports)]) == 0
    assert "4 intermediate values of study 'default' written to" in capsys.readouterr().out
    r = pd.read_csv(reports)
    assert r.columns.tolist() == ["id", "state", "step", "value"]
    assert r.values.tolist() == [[i, ["complete", "pruned"][i % 2], 0, float(i)]
                                 for i in range(4)]
    assert main(["study", "export", db, "--csv", str(csv_path), "--intermediate", "-"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "id,state,step,value"
    assert main(["study", "export", db, "--csv", "-", "--intermediate", "-"]) == 2
    assert "cannot both be standard output" in capsys.readouterr().err
    assert main(["study", "export", db, "--csv", str(csv_path), "--intermediate",
                 str(tmp_path)]) == 2
    assert "--intermediate" in capsys.readouterr().err
