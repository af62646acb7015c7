"""The ask+tell cost script against Optuna's TPE: a tiny run prints its table."""

import importlib.util

import pytest

from benchmarks.harness.ask_tell_cost import _median, main


def test_the_median():
    assert _median([3.0, 1.0, 2.0]) == 2.0
    assert _median([4.0, 1.0, 2.0, 3.0]) == 2.5


@pytest.mark.skipif(importlib.util.find_spec("optuna") is None,
                    reason="the comparison needs optuna (pip install \"mfbo[optuna]\")")
def test_a_tiny_run(capsys):
    out = main(["--n", "12", "--dims", "2", "--warmup", "1", "--asks", "2"])
    assert set(out) == {"2"} and all(len(v) == 2 for v in out["2"].values())
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| D |") and lines[2].startswith("| 2 |")


@pytest.mark.skipif(importlib.util.find_spec("optuna") is None,
                    reason="the comparison needs optuna (pip install \"mfbo[optuna]\")")
def test_a_tiny_run_in_a_space_of_tied_losses(capsys):
    out = main(["--n", "12", "--dims", "3", "--warmup", "1", "--asks", "2", "--space", "tied",
                "--with-noslices"])
    assert set(out["3"]) == {"mfbo", "optuna-tpe", "mfbo-noslices"}
    lines = capsys.readouterr().out.splitlines()
    assert "without slices" in lines[0] and lines[2].startswith("| 3 |")
    assert lines[2].count("|") == 7
