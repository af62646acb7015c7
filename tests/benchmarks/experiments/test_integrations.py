"""The integrations experiment at reduced sizes, and its user errors (CI smoke test)."""

import json

import pytest


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
