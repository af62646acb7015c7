"""``mfbo study show|export|best``: a study file read without being changed."""

import json
import sqlite3

import pandas as pd
import pytest

import mfbo
from mfbo.cli import main

from tests.support import SPACE, quad, run_mfbo


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
               str(tmp_path / "no" / "t.csv")], "does not exist")]
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
