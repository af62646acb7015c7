"""The experiment scripts run end to end at reduced sizes (CI smoke test)."""

import json

import pytest

from tests.support import requires_data
from benchmarks.experiments import regression_friedman as bench


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


@pytest.mark.slow
@requires_data("cpu_act.csv")
def test_quick_parameter_sweep(capsys):
    from benchmarks.experiments import regression_sweep
    regression_sweep.main(["--quick"])
    out = capsys.readouterr().out
    assert out.count("| mutual_info | 10 | bp | 20 |") == 2  # both data sets, every setting


@pytest.mark.slow
def test_online_classification_experiment_on_digits(tmp_path, capsys):
    from benchmarks.experiments import classification_online
    classification_online.main(["--dataset", "digits", "--batches", "4", "--out", str(tmp_path)])
    res = json.loads((tmp_path / "results.json").read_text())
    assert set(res["curves"]) == {"Mondrian", "ERT-1", "ERT", "RF"}
    assert len(res["curves"]["Mondrian"]["accuracy"]) == 4
    assert res["curves"]["Mondrian"]["accuracy"][-1] > 0.8
    for png in ("accuracy_vs_fraction.png", "accuracy_vs_time.png"):
        assert (tmp_path / png).stat().st_size > 5_000


def test_bo_quick_runs_and_writes_report(tmp_path, capsys):
    from benchmarks.experiments import bo_quick

    res = bo_quick.main(["--budget", "12", "--seeds", "2", "--timing-n", "55",
                         "--out", str(tmp_path)])
    assert set(res) == {"mondrian", "rf-smac", "random"}
    assert res["mondrian"]["ask_tell_median_s"][50] > 0
    assert (tmp_path / "convergence.png").stat().st_size > 5_000
    assert "| mondrian |" in (tmp_path / "report.md").read_text()


def test_integrations_quick_writes_tables_and_json(tmp_path, capsys):
    pytest.importorskip("optuna")
    from benchmarks.experiments import integrations

    assert integrations.main(["--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    report = (tmp_path / "report.md").read_text()
    assert out.startswith(report)
    for heading in ("## Sampler quality: Branin, 60 evaluations, seeds 0-1",
                    "## Sampler overhead: Branin, 60 trials", "## Search CV: SVC on digits",
                    "| mfbo.minimize (defaults) |", "| mfbo.Optimizer ask + tell |",
                    "| MondrianSearchCV |", "| RandomizedSearchCV |"):
        assert heading in report
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["parts"] == ["sampler-quality", "sampler-overhead", "search-cv"]
    assert len(res["environment"]["load_average"]) == len(res["environment"]["load_after"]) == 3
    assert "optuna" in res["environment"]["versions"]
    quality = res["sampler-quality"]["methods"]
    assert set(quality) == {"mfbo.minimize", "MondrianSampler"}
    for r in quality.values():
        assert len(r["per_seed"]) == 2 and r["worst"] == max(r["per_seed"]) >= 0.397887
    overhead = res["sampler-overhead"]
    assert overhead["window"] == [54, 60] and overhead["ratio_sampler_over_optimizer"] > 0
    search = res["search-cv"]
    assert (search["n_iter"], search["rows"]) == (4, 450)
    assert set(search["methods"]) == {"MondrianSearchCV", "RandomizedSearchCV"}
    for r in search["methods"].values():
        assert len(r["held_out"]) == 2 and 0 <= r["worst_best_cv"] <= r["mean_best_cv"] <= 1


def test_integrations_user_errors_exit_2_without_running(tmp_path, monkeypatch, capsys):
    import importlib.util

    from benchmarks.experiments import integrations

    assert integrations.main(["--only", "sampler-speed", "--out", str(tmp_path)]) == 2
    assert "unknown part(s) sampler-speed" in capsys.readouterr().err
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "optuna" else find_spec(name, *a))
    assert integrations.main(["--only", "sampler-overhead", "--out", str(tmp_path)]) == 2
    assert "sampler-overhead need Optuna" in capsys.readouterr().err
    assert integrations.settings(["search-cv"])["parts"] == ["search-cv"]  # no Optuna needed
    assert not (tmp_path / "results.json").exists()


def test_first_minute_quick_prints_its_three_tables(tmp_path, capsys):
    from benchmarks import first_minute

    res = first_minute.main(["--quick", "--json", str(tmp_path / "first.json")])
    out = capsys.readouterr().out
    tables = out.split("## ")[1:]
    assert [t.split()[0].rstrip(",") for t in tables] == ["Import", "First", "Compiled"]
    imports = [line for line in tables[0].splitlines() if line.startswith("| ")][1:]
    assert [line.split(" | ")[0][2:] for line in imports] == list(first_minute.HEAVY)
    runs = [line for line in tables[1].splitlines() if line.startswith("| ")][1:]
    assert len(runs) == len(first_minute.RUNS) and all(r.count("|") == 8 for r in runs)
    header = tables[2].splitlines()[2]
    assert header.count("|") == 2 + 2 * len(first_minute.RUNS)
    assert json.loads((tmp_path / "first.json").read_text()) == res
    assert set(res["runs"]) == set(first_minute.RUNS) and len(res["imports"]["mfbo"]) == 1
    for run in res["runs"].values():
        assert set(run["usual"]) == {"import_s", "call_s", "compile_s", "functions"}
