"""The online classification experiment runs end to end on digits (CI smoke test)."""

import json

import pytest


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
