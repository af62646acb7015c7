"""The scaling benchmark: tiny runs write well-formed outputs.  No timing checks."""

import json

import pytest

from benchmarks.harness import scaling
from benchmarks.harness.methods import optimizer_settings
from tests.support import run_mfbo

PNG = b"\x89PNG\r\n\x1a\n"


def test_quick_run_writes_results_report_and_plot(tmp_path):
    scaling.run(tmp_path, parts=["overhead", "scoring", "memory", "batch"], n_max=15,
                quick=True, gp="sklearn")
    data = json.loads((tmp_path / "results.json").read_text())
    assert {"environment", "overhead", "scoring", "memory", "journal", "batch"} <= set(data)
    env = data["environment"]
    assert len(env["load_average"]) == 3 and len(env["load_after"]) == 3
    assert env["versions"]["numpy"] and env["cpu_count"] >= 1

    ov = data["overhead"]
    assert ov["problem"] == "branin" and set(ov["methods"]) == {"mondrian", "rf-smac", "gp"}
    assert ov["methods"]["gp"]["label"] == "gp (sklearn)"
    for r in ov["methods"].values():
        assert r["n"] == len(r["ask_s"]) == len(r["tell_s"]) == 15 and r["stopped"] == "n_max"
        assert min(r["ask_s"] + r["tell_s"]) >= 0
    for summary in ov["summary"].values():
        assert list(summary["at"]) == ["15"]  # no 100/1,000/10,000 within n_max=15
        at = summary["at"]["15"]
        assert at["total_ms"] >= at["ask_ms"] > 0 and summary["last"] == {"n": 15, **at}
    assert (tmp_path / "overhead.png").read_bytes()[:8] == PNG

    for r in data["scoring"]:
        assert r["n_trees"] == 10 and r["predict_s"] > 0 and r["ucb_s"] > 0
        assert r["point_trees_per_s"] == pytest.approx(r["n_candidates"] * 10 / r["predict_s"])
    assert [(r["D"], r["n_obs"]) for r in data["scoring"]] == [(2, 20), (6, 30)]

    for r in data["memory"]:
        # min_samples_split=2 and distinct points: every tree has 2n - 1 nodes
        assert r["nodes"] == 10 * (2 * r["n_obs"] - 1) and r["points"] == r["n_obs"]
        assert r["allocated_bytes"] >= r["used_bytes"] > 0 and r["roundtrip_equal"]
        assert r["pickle_bytes"] > 0

    j = data["journal"]
    assert j["events"] == 2 * j["n_obs"] and j["reloaded_trials"] == j["n_obs"]
    assert j["file_bytes"] > 0

    assert [(r["strategy"], r["size"]) for r in data["batch"]] == [
        ("thompson", 2), ("thompson", 4), ("constant_liar", 2), ("constant_liar", 4)]
    assert all(r["proposed"] == r["size"] for r in data["batch"])

    md = (tmp_path / "report.md").read_text()
    for heading in ("## Overhead per ask+tell on branin", "## Candidate scoring",
                    "## Memory", "## Journal", "## Batch ask at 20 observations"):
        assert heading in md
    assert "| gp (sklearn) |" in md


def test_budget_stops_a_method_and_table_marks_unreached_n(tmp_path):
    res = scaling.run(tmp_path, parts=["overhead"], n_max=100_000, methods=["gp"],
                      budgets={"gp": 1e-9}, gp="sklearn", quick=True)
    r = res["overhead"]["methods"]["gp"]
    assert r["n"] == 1 and r["stopped"] == "time budget"
    summary = res["overhead"]["summary"]["gp"]
    assert summary["at"] == {100: None, 1_000: None, 10_000: None}
    assert summary["last"]["n"] == 1 and summary["last"]["total_ms"] > 0
    md = (tmp_path / "report.md").read_text()
    assert "| gp (sklearn) | — |" in md and "| gp (sklearn) | 1 | time budget |" in md


def test_overhead_loop_runs_any_of_mfbos_own_methods(tmp_path):
    res = scaling.run(tmp_path, parts=["overhead"], n_max=12, methods=["mondrian-searchstop"],
                      quick=True)
    r = res["overhead"]["methods"]["mondrian-searchstop"]
    assert r["n"] == 12 and r["budget_s"] == 10.0 and len(r["ask_s"]) == 12


def test_cold_start_makes_a_model_based_proposal():
    (row,) = scaling.coldstart(fresh_cache=False)
    assert row["model_based"] and row["n_initial"] == 10
    assert row["to_first_proposal_s"] >= row["import_s"] > 0


def test_argument_errors():
    with pytest.raises(ValueError, match="unknown part"):
        scaling.run("unused", parts=["nope"])
    with pytest.raises(ValueError, match="unknown method"):
        scaling.run("unused", methods=["nope"])
    with pytest.raises(ValueError, match="unknown method.*'optuna'"):  # a peer
        scaling.run("unused", methods=["mondrian", "optuna"])
    assert scaling._budget(scaling._budgets("60"), "mondrian-empirical") == 60.0
    assert scaling._budgets("gp=5, mondrian=7") == {"gp": 5.0, "mondrian": 7.0}
    assert scaling._budget({}, "mondrian-bp") == scaling.DEFAULT_BUDGETS["mondrian"]
    assert scaling._budget({}, "rf-smac") == scaling.DEFAULT_BUDGETS["rf-smac"]
    with pytest.raises(Exception, match="unknown method"):
        scaling._budgets("smac=5")
    assert optimizer_settings("mondrian") == {"surrogate": "mondrian", "acquisition": "ucb",
                                              "kappa": 1.0}
    with pytest.raises(ValueError, match="not one of mfbo's own"):
        optimizer_settings("optuna")


def test_mfbo_scale_command(tmp_path):
    res = run_mfbo("scale", "--quick", "--only", "overhead", "--methods", "mondrian",
                   "--n-max", "12", "--out", "out", cwd=tmp_path, timeout=300)
    if res.returncode == 2 and "invalid choice: 'scale'" in res.stderr:
        pytest.fail("the mfbo.commands entry point 'scale' is not registered: pip install -e .")
    assert res.returncode == 0, res.stderr
    assert "| mondrian |" in res.stdout
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["overhead"]["methods"]["mondrian"]["n"] == 12
    assert (tmp_path / "out" / "overhead.png").read_bytes()[:8] == PNG
    res = run_mfbo("scale", "--only", "nope", "--out", "o", cwd=tmp_path, timeout=300)
    assert res.returncode == 2 and "unknown part" in res.stderr and "Traceback" not in res.stderr
