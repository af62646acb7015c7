"""The small-budget Branin experiment runs end to end (CI smoke test)."""


def test_bo_quick_runs_and_writes_report(tmp_path, capsys):
    from benchmarks.experiments import bo_quick

    res = bo_quick.main(["--budget", "12", "--seeds", "2", "--timing-n", "55",
                         "--out", str(tmp_path)])
    assert set(res) == {"mondrian", "rf-smac", "random"}
    assert res["mondrian"]["ask_tell_median_s"][50] > 0
    assert (tmp_path / "convergence.png").stat().st_size > 5_000
    assert "| mondrian |" in (tmp_path / "report.md").read_text()
