"""A pruned trial in the results: counted, never the best, its state in the DataFrame, its
reported values in :meth:`OptimizeResult.intermediate_values` and their figure."""

import numpy as np
import pytest

import mfbo
from tests.support import SPACE


@pytest.fixture(params=["minimize", "maximize"])
def result(request):
    sign = 1.0 if request.param == "minimize" else -1.0
    opt = mfbo.Optimizer(SPACE, surrogate="random", random_state=0, direction=request.param)
    curves = {0: [3.0, 2.0, 1.0], 1: [0.5], 2: [4.0, 3.5], 3: []}
    for tid, curve in curves.items():
        t = opt.ask()
        for step, v in enumerate(curve):
            opt.report(t, step * 2, sign * v)
    opt.tell(0, sign * 1.0)
    opt.tell(1, state="pruned")  # its 0.5 is no final value: it is never the best
    opt.tell(2, ValueError("diverged"))
    res = opt.result()
    opt.close()
    return res, sign


def test_pruned_trials_are_counted_and_never_the_best(result):
    res, sign = result
    assert res.n_pruned == 1 and res.n_failed == 1
    assert res.best_trial.id == 0 and res.best_value == sign * 1.0
    assert "n_pruned=1" in repr(res)
    np.testing.assert_array_equal(res.func_vals, [sign * 1.0, np.nan, np.nan])
    np.testing.assert_array_equal(res.best_so_far(), [sign * 1.0] * 3)
    df = res.to_dataframe()
    assert df["state"].tolist() == ["complete", "pruned", "failed", "pending"]
    assert np.isnan(df["value"][1])


def test_intermediate_values_table(result):
    res, sign = result
    iv = res.intermediate_values()
    assert iv.index.tolist() == [0, 1, 2] and iv.columns.tolist() == [0, 2, 4]
    np.testing.assert_array_equal(iv.to_numpy(), sign * np.array(
        [[3.0, 2.0, 1.0], [0.5, np.nan, np.nan], [4.0, 3.5, np.nan]]))
    assert mfbo.Optimizer(SPACE).result().intermediate_values().shape == (0, 0)


def test_plot_intermediate_values(result, tmp_path):
    res, _ = result
    fig = res.plot_intermediate_values(path=tmp_path / "curves.png", title="curves")
    ax, = fig.axes
    assert len(ax.lines) == 3 and (tmp_path / "curves.png").stat().st_size > 0
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == \
        ["complete", "failed", "pruned"]
    empty = mfbo.plot_intermediate_values(mfbo.Optimizer(SPACE).result())
    assert "no trial reported" in empty.axes[0].texts[0].get_text()
