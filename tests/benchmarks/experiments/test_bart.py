"""The BART sampler experiment runs end to end at reduced sizes; its ESS estimator is right
on an AR(1) chain."""

import json

import numpy as np
import pytest

from tests.support import requires_data
from benchmarks.experiments import bart as experiment


def test_effective_sample_size_of_an_ar1_chain():
    # ESS of an AR(1) chain with coefficient rho is n (1 - rho) / (1 + rho)
    rng = np.random.default_rng(0)
    n, rho = 20_000, 0.8
    x = np.empty(n)
    x[0] = rng.standard_normal()
    for t in range(1, n):
        x[t] = rho * x[t - 1] + np.sqrt(1 - rho ** 2) * rng.standard_normal()
    assert abs(experiment.effective_sample_size(x) / (n * (1 - rho) / (1 + rho)) - 1) < 0.15
    assert abs(experiment.effective_sample_size(rng.standard_normal(n)) / n - 1) < 0.1


def test_hypercube_recipe():
    X, y, Xt, yt = experiment.hypercube(3, 0)
    assert X.shape == Xt.shape == (80, 3) and y.shape == (80,)
    # ten points around each vertex, all with the vertex's value up to the small noise
    assert np.all(np.abs(np.abs(X) - 1) < 0.6)
    vertex = (X > 0) @ (2 ** np.arange(3))
    assert np.all(np.bincount(vertex) == 10)
    assert max(y[vertex == v].std() for v in range(8)) < 0.05 < np.std(y)


@pytest.mark.slow
@requires_data("cal_housing.data")
def test_quick_bart_experiment_writes_report_tables_and_png(tmp_path, capsys):
    experiment.main(["--quick", "--no-peers", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "Hypercube-D" in out and "California housing" in out
    res = json.loads((tmp_path / "results.json").read_text())
    for D in ("2", "3"):
        for s in ("pg", "cgm", "growprune"):
            assert res["hypercube"][D][s]["ess"][0] > 0
    assert set(res["california"]["ours"]) == {"pg", "cgm", "growprune"}
    assert res["california"]["ours"]["pg"][0]["test_rmse"] > 0
    assert (tmp_path / "hypercube_2.png").stat().st_size > 10_000
    assert (tmp_path / "report.md").read_text() == out
