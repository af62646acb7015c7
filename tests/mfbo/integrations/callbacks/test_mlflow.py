"""The MLflow logger: a run for the study, a nested run per finished trial with its
parameters, value, intermediate values and state, against a real MLflow tracking store."""

import pytest

pytest.importorskip("mlflow", reason='the MLflow logger needs MLflow (pip install "mfbo[mlflow]")')

from mlflow.tracking import MlflowClient  # noqa: E402

import mfbo  # noqa: E402
from mfbo.integrations.callbacks.mlflow import MLflowCallback  # noqa: E402
from tests.support import SPACE, quad  # noqa: E402


def objective(x, y, trial):
    for step in range(3):
        trial.report(quad(x, y) + 1.0 / (step + 1), step)
    if x > 0.6:
        raise mfbo.TrialPruned("stopped")
    if x < -0.6:
        raise RuntimeError("diverged")
    return quad(x, y)


def test_one_run_per_trial_nested_under_the_study_run(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    with MLflowCallback(uri, experiment_name="demo", metric_name="loss") as logger:
        result = mfbo.minimize(objective, SPACE, n_calls=12, random_state=3, progress_bar=False,
                               callbacks=[logger], study_name="quad")
        study_run = logger.study_run_id
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("demo")
    runs = {r.info.run_id: r for r in client.search_runs([experiment.experiment_id])}
    parent = runs.pop(study_run)
    assert parent.info.status == "FINISHED" and parent.data.tags["mfbo.study_name"] == "quad"
    assert parent.data.metrics["best_loss"] == pytest.approx(result.best_value)
    assert len(runs) == len(result.trials) == 12
    by_trial = {int(r.data.tags["mfbo.trial_id"]): r for r in runs.values()}
    status = {"complete": "FINISHED", "pruned": "KILLED", "failed": "FAILED"}
    for t in result.trials:
        run = by_trial[t.id]
        assert run.data.tags["mlflow.parentRunId"] == study_run
        assert run.data.tags["mfbo.state"] == t.state and run.info.status == status[t.state]
        assert run.data.params == {k: str(v) for k, v in t.params.items()}
        assert ("loss" in run.data.metrics) == (t.state == "complete")
        if t.state == "complete":
            assert run.data.metrics["loss"] == pytest.approx(t.value)
        history = client.get_metric_history(run.info.run_id, "intermediate_value")
        assert {m.step: m.value for m in history} == pytest.approx(t.intermediate_values)
        if t.state == "failed":
            assert run.data.tags["mfbo.error"] == t.error
    assert {t.state for t in result.trials} == {"complete", "pruned", "failed"}


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="metric_name"):
        MLflowCallback(metric_name="")
    with pytest.raises(ValueError, match="experiment_name"):
        MLflowCallback(experiment_name=3)
