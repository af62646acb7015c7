"""The regression benchmark runs end to end at reduced sizes (CI smoke test)."""

import json

import pytest

from benchmarks.experiments import regression_friedman as bench
from tests.support import requires_data


@pytest.mark.slow
@requires_data("cpu_act.csv")
def test_quick_benchmark_writes_report_tables_and_png(tmp_path, capsys):
    bench.main(["--quick", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "Calibration" in out and "Friedman-1" in out and "cpu_act" in out
    res = json.loads((tmp_path / "results.json").read_text())
    assert set(res["friedman1"]["methods"]) >= {"Mondrian empirical", "Mondrian bp", "RF", "ET"}
    for r in res["friedman1"]["methods"].values():
        assert len(r["calibration"]) == 9 and r["rmse"] > 0
    assert (tmp_path / "gap_toy.png").stat().st_size > 10_000
    assert (tmp_path / "report.md").read_text() == out
