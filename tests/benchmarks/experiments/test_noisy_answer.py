"""The noisy-answer experiment: each answer is scored by its noise-free value."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.experiments import noisy_answer
from benchmarks.experiments.noisy_answer import CASES, _problem, run_case


@pytest.fixture
def runs(monkeypatch):
    """The results of the ``mfbo.minimize`` calls the test makes, in order."""
    import mfbo

    kept = []
    real = mfbo.minimize

    def keep(*args, **kwargs):
        kept.append(real(*args, **kwargs))
        return kept[-1]

    monkeypatch.setattr(mfbo, "minimize", keep)
    return kept


def test_without_noise_the_observed_best_is_the_best_true_value_found(runs):
    observed, estimated = run_case("hartmann3", 0.0, 14, seed=2)
    _, f = _problem("hartmann3")
    true = [f(t.params) for t in runs[0].trials]
    assert observed == min(true) <= estimated
    assert estimated in true


def test_noise_moves_the_values_told_and_the_scores_are_noise_free(runs):
    observed, estimated = run_case("rosenbrock3", 5.0, 12, seed=0)
    _, f = _problem("rosenbrock3")
    res = runs[0]
    noise = np.array([t.value - f(t.params) for t in res.trials])
    assert np.std(noise) > 1.0
    assert observed == f(res.best_params)
    assert estimated == f(res.estimated_best()["params"])


def test_every_case_names_a_known_problem_and_both_splits_are_filled(capsys):
    assert {s for s, _, _ in CASES} == {"dev", "test"}
    for _, name, _ in CASES:
        space, f = _problem(name)
        assert np.isfinite(f({k: (v[0] + v[1]) / 2 if isinstance(v, tuple) else
                              (v.low + v.high) / 2 for k, v in dict(space).items()}))
    assert noisy_answer.main(["--split", "dev", "--seeds", "1", "--budgets", "10"]) == 0
    out = capsys.readouterr().out
    assert out.count("| branin |") == 2 and out.count("| hartmann3 |") == 2
    assert "10 evaluations, all cases" in out
