"""Log a study to MLflow: MLflowCallback records each finished trial as an MLflow run (its
parameters, value, intermediate values and state) nested under one run of the study.

Run: ``python examples/callbacks_mlflow.py`` (a few seconds; writes mlflow.db where it runs;
``mlflow ui --backend-store-uri sqlite:///mlflow.db`` shows it, with the full mlflow
package).  Needs ``pip install "mfbo[mlflow]"``.
"""

import logging

from mlflow.tracking import MlflowClient

import mfbo
from mfbo.integrations.callbacks.mlflow import MLflowCallback

logging.getLogger("mlflow").setLevel(logging.WARNING)  # (its database set-up notes)
URI = "sqlite:///mlflow.db"


def loss(x, y, trial):
    """A quadratic, reported at three increasing budgets."""
    for step in range(3):
        trial.report((x - 0.3) ** 2 + (y + 0.2) ** 2 + 0.5 / (step + 1), step)
    return (x - 0.3) ** 2 + (y + 0.2) ** 2


with MLflowCallback(URI, experiment_name="quadratic") as logger:
    result = mfbo.minimize(loss, {"x": (-1.0, 1.0), "y": (-1.0, 1.0)}, n_calls=10,
                           random_state=0, progress_bar=False, callbacks=[logger],
                           study_name="quadratic")

client = MlflowClient(URI)
experiment = client.get_experiment_by_name("quadratic")
runs = client.search_runs([experiment.experiment_id], order_by=["metrics.value ASC"])
trial_runs = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
print(f"{len(trial_runs)} trial runs nested under the study run {logger.study_run_id}")
best = trial_runs[0]
print(f"best run {best.info.run_name}: value {best.data.metrics['value']:.4f}, "
      f"params {best.data.params}; mfbo's best value {result.best_value:.4f}")
