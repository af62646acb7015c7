"""OptimizeResult: the history as a DataFrame and as an Optuna study, with parameters and
extra fields whose names clash with the columns (or user attributes) of mfbo's own; pruned
trials counted, never the best, their reported values as a table and a figure."""

import json
import math

import numpy as np
import pytest

import mfbo
from mfbo import OptimizeResult, Space, Trial
from mfbo.results.result import STUDY_COLUMNS
from tests.support import SPACE

#: a parameter named like every column of the study itself, one named like the renamed
#: column of another, and an ordinary one
CLASHING_SPACE = {**{name: mfbo.Real(0.0, 1.0) for name in STUDY_COLUMNS},
                  "param_value": mfbo.Integer(1, 5), "x": mfbo.Categorical(["a", "b"])}


def _clashing_result(n: int = 3) -> OptimizeResult:
    """``n`` trials of :data:`CLASHING_SPACE` whose extra fields clash with study columns,
    with parameters (their own names and renamed ones) and with each other's renamings;
    the last trial failed, and only the first has the extra field ``late``."""
    space = Space(CLASHING_SPACE)
    trials = []
    for i in range(n):
        params = {**{name: (i + 1) / 10 + k / 100 for k, name in enumerate(STUDY_COLUMNS)},
                  "param_value": i + 1, "x": "ab"[i % 2]}
        failed = i == n - 1
        extra = {"value": f"extra value {i}", "x": f"extra x {i}", "param_value": -i,
                 "extra_x": f"extra extra_x {i}", "note": i}
        if i == 0:
            extra["late"] = "only here"
        trials.append(Trial(id=i, params=params, state="failed" if failed else "complete",
                            value=None if failed else float(i), extra=extra,
                            error="RuntimeError: boom" if failed else None,
                            asked_at=1000.0 + i, start=1000.5 + i, end=1001.0 + i,
                            worker=f"host:{i}"))
    return OptimizeResult(space, trials)


def test_to_dataframe_loses_no_parameter_and_no_extra_field():
    result = _clashing_result()
    df = result.to_dataframe()
    assert df.columns.is_unique, list(df.columns)
    # the study's own columns keep their names and hold the study's data
    assert list(df["id"]) == [0, 1, 2]
    assert list(df["value"][:2]) == [0.0, 1.0] and math.isnan(df["value"][2])
    assert list(df["state"]) == ["complete", "complete", "failed"]
    assert list(df["error"][2:]) == ["RuntimeError: boom"]
    assert list(df["worker"]) == ["host:0", "host:1", "host:2"]
    assert list(df["duration"]) == [0.5, 0.5, 0.5]
    # a clashing parameter is param_<name>; param_value is taken by the parameter of that
    # name, so the parameter "value" is param_param_value
    for name in STUDY_COLUMNS:
        column = "param_param_value" if name == "value" else f"param_{name}"
        assert list(df[column]) == [t.params[name] for t in result.trials], name
    assert list(df["param_value"]) == [1, 2, 3] and list(df["x"]) == ["a", "b", "a"]
    # a clashing extra field is extra_<name>, prefixed again while that is taken
    assert list(df["extra_value"]) == [f"extra value {i}" for i in range(3)]
    assert list(df["extra_param_value"]) == [0, -1, -2]
    assert list(df["extra_x"]) == [f"extra extra_x {i}" for i in range(3)]
    assert list(df["extra_extra_x"]) == [f"extra x {i}" for i in range(3)]
    assert list(df["note"]) == [0, 1, 2]
    assert df["late"][0] == "only here" and df["late"][1:].isna().all()
    # every value of every trial is somewhere: 1 + 11 parameters + 9 study columns + 6 extras
    assert len(df.columns) == 1 + len(CLASHING_SPACE) + len(STUDY_COLUMNS) - 1 + 6


def test_to_dataframe_keeps_the_columns_users_read():
    space = Space({"x": (0.0, 1.0), "y": (0.0, 1.0)})
    trials = [Trial(id=0, params={"x": 0.1, "y": 0.2}, state="complete", value=1.0,
                    extra={"note": "ok"})]
    df = OptimizeResult(space, trials).to_dataframe()
    assert list(df.columns) == ["id", "x", "y", "value", "state", "error", "asked_at",
                                "start", "end", "duration", "worker", "origin", "note"]
    empty = OptimizeResult(space, []).to_dataframe()
    assert len(empty) == 0 and list(empty.columns) == list(df.columns[:-1])


def test_to_optuna_keeps_mfbo_attributes_and_the_clashing_extra_fields():
    optuna = pytest.importorskip("optuna")
    space = Space({"x": (0.0, 1.0)})
    extra = {"mfbo_trial_id": "mine", "mfbo_error": "my error field",
             "extra_mfbo_trial_id": "mine too", "note": 1}
    trials = [Trial(id=0, params={"x": 0.5}, state="complete", value=2.0, extra=dict(extra)),
              Trial(id=1, params={"x": 0.25}, state="failed", error="ValueError: no",
                    extra=dict(extra)),
              Trial(id=2, params={"x": 0.75}, state="complete", value=1.0,
                    extra={"mfbo_trial_id": "alone", "obj": object()})]
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = mfbo.to_optuna(OptimizeResult(space, trials))
    by_id = {t.user_attrs["mfbo_trial_id"]: t.user_attrs for t in study.trials}
    assert sorted(by_id) == [0, 1, 2]
    # one name per extra field for the whole result: the user's own extra_mfbo_trial_id
    # keeps its name, so their mfbo_trial_id is prefixed twice, in every trial
    assert by_id[0] == {"mfbo_trial_id": 0, "extra_extra_mfbo_trial_id": "mine",
                        "extra_mfbo_error": "my error field",
                        "extra_mfbo_trial_id": "mine too", "note": 1}
    assert by_id[1] == {**by_id[0], "mfbo_trial_id": 1, "mfbo_error": "ValueError: no"}
    assert by_id[2]["extra_extra_mfbo_trial_id"] == "alone"
    # an extra field JSON cannot store is kept as its text, not dropped
    assert by_id[2]["obj"].startswith("<object object at")
    json.dumps([t.user_attrs for t in study.trials])


@pytest.fixture(params=["minimize", "maximize"])
def pruned_result(request):
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


def test_pruned_trials_are_counted_and_never_the_best(pruned_result):
    res, sign = pruned_result
    assert res.n_pruned == 1 and res.n_failed == 1
    assert res.best_trial.id == 0 and res.best_value == sign * 1.0
    assert "n_pruned=1" in repr(res)
    np.testing.assert_array_equal(res.func_vals, [sign * 1.0, np.nan, np.nan])
    np.testing.assert_array_equal(res.best_so_far(), [sign * 1.0] * 3)
    df = res.to_dataframe()
    assert df["state"].tolist() == ["complete", "pruned", "failed", "pending"]
    assert np.isnan(df["value"][1])


def test_intermediate_values_table(pruned_result):
    res, sign = pruned_result
    iv = res.intermediate_values()
    assert iv.index.tolist() == [0, 1, 2] and iv.columns.tolist() == [0, 2, 4]
    np.testing.assert_array_equal(iv.to_numpy(), sign * np.array(
        [[3.0, 2.0, 1.0], [0.5, np.nan, np.nan], [4.0, 3.5, np.nan]]))
    assert mfbo.Optimizer(SPACE).result().intermediate_values().shape == (0, 0)


def test_plot_intermediate_values(pruned_result, tmp_path):
    res, _ = pruned_result
    fig = res.plot_intermediate_values(path=tmp_path / "curves.png", title="curves")
    ax, = fig.axes
    assert len(ax.lines) == 3 and (tmp_path / "curves.png").stat().st_size > 0
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == \
        ["complete", "failed", "pruned"]
    empty = mfbo.plot_intermediate_values(mfbo.Optimizer(SPACE).result())
    assert "no trial reported" in empty.axes[0].texts[0].get_text()
