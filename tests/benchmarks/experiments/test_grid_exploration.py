"""The Mondrian grid exploration experiment runs end to end at reduced sizes."""

import json

import pytest

from benchmarks.experiments import grid_exploration


@pytest.mark.slow
def test_quick_grid_exploration_writes_report_tables_and_pngs(tmp_path, capsys):
    grid_exploration.main(["--quick", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "x2 (irrelevant)" in out and "Friedman-1" in out and "fit / move" in out
    assert (tmp_path / "report.md").read_text().strip() == out.strip()
    res = json.loads((tmp_path / "results.json").read_text())
    assert len(res["toy"]["runs"]) == 4 and len(res["friedman"]) == 1
    for run in res["toy"]["runs"]:
        assert run["val_rmse_best"] <= run["val_rmse_start"]
        assert run["best_lifetimes"][0] > 0          # the relevant input gets cuts
    fried = res["friedman"][0]["best_lifetimes"]
    assert min(fried[:5]) > 0 and sum(fried[5:]) < sum(fried[:5]) / 5
    assert all(r["move_ms_median"] > 0 and r["fit_ms_median"] > 0 for r in res["cost"])
    for png in ("toy_exploration.png", "friedman_exploration.png"):
        assert (tmp_path / png).stat().st_size > 20_000
