"""The Mondrian kernel experiments script runs end to end at toy sizes (CI smoke test)."""

import json

import pytest

from tests.support import requires_data
from benchmarks.experiments import kernel_experiments as bench


@pytest.mark.slow
@requires_data("cpu_act.csv")
def test_quick_kernel_experiments_write_report_json_and_pngs(tmp_path, capsys):
    bench.main(["--quick", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    for title in ("1. Convergence", "2. Fast kernel-width", "3. Recovering", "4. Mondrian kernel vs"):
        assert title in out
    assert (tmp_path / "report.md").read_text().strip() == out.strip()
    res = json.loads((tmp_path / "results.json").read_text())
    conv = res["convergence"][0]
    assert conv["M"] == [1, 5, 10] and 0 < conv["exact"] < conv["mean"]["fourier"][0]
    assert len(res["width"]["curves"]) == 7
    assert res["width"]["cost"]["ratio_exact"] > 0
    assert set(res["forest"]["results"]) >= {"Mondrian kernel (SGD path)",
                                             "Mondrian forest (per-tree ridge, same trees)"}
    for png in ("convergence.png", "width_selection.png", "synthetic_lifetime.png",
                "kernel_vs_forest.png"):
        assert (tmp_path / png).stat().st_size > 10_000
