"""The outcome-cost script: its objective's returns fit each setting, and a tiny run prints
the table."""

import numpy as np

from benchmarks.harness import outcome_cost
from benchmarks.harness.outcome_cost import SETTINGS, _outcome, main, measure


def test_the_returns_fit_the_settings():
    x = np.array([0.1, 0.9])
    assert isinstance(_outcome(x, 1, 0), float)
    assert len(_outcome(x, 3, 0)) == 3
    out = _outcome(x, 2, 2)
    assert len(out["loss"]) == 2 and out["c1"] > 0 > out["c0"]


def test_a_tiny_run(capsys, monkeypatch):
    assert measure(8, 2, 1, 2, 1, "parego") > 0
    monkeypatch.setattr(outcome_cost, "SETTINGS", [SETTINGS[0], SETTINGS[-1]])
    assert main(["--n", "6", "--dims", "2", "--asks", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].startswith("| 1 objective |") and lines[2].endswith("| 1.00 |")
    assert len(lines) == 2 + 2 and "(hvi)" in lines[3]
