"""Log an mfbo study to MLflow: one run for the study, one nested run per finished trial.

Pass an :class:`MLflowCallback` as ``callbacks=[...]`` to :func:`mfbo.minimize` (or call it with
``(trial, optimizer)`` after each tell of an ask/tell loop).  Each trial's run holds its
parameters, its value (``metric_name``; ``metric_name_<i>`` for each of several values), its
intermediate values as the metric ``intermediate_value`` by step, and the tags ``mfbo.trial_id``,
``mfbo.state``, ``mfbo.origin``; it ends ``FINISHED`` when complete, ``KILLED`` when pruned and
``FAILED`` when failed (with ``mfbo.error``).  The study's run, started at the first trial,
holds the best value so far (``best_<metric_name>``, by the number of finished trials) and ends
at :meth:`MLflowCallback.close` (or the end of a ``with`` block).  Runs are written with
MLflow's client API, so nothing of MLflow's active-run state is touched.
"""

from __future__ import annotations

import importlib
import time

try:
    importlib.import_module("mlflow")
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('MLflowCallback needs MLflow; install it with: pip install '
                      '"mfbo[mlflow]" (or pip install mlflow-skinny)') from exc

from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient

__all__ = ["MLflowCallback", "STATUS"]

#: the MLflow status a finished trial's run ends with, by the trial's state
STATUS = {"complete": "FINISHED", "pruned": "KILLED", "failed": "FAILED"}


def _ms(seconds) -> int:
    return int(round(1000 * (time.time() if seconds is None else seconds)))


class MLflowCallback:
    """Log each finished trial as an MLflow run nested under the study's run.

    Parameters
    ----------
    tracking_uri : str, optional
        Where MLflow keeps runs (e.g. ``"sqlite:///mlflow.db"`` or a tracking server's URL);
        None: MLflow's own default (``MLFLOW_TRACKING_URI``).
    experiment_name : str, optional
        The MLflow experiment (created when missing); None: the study's name.
    metric_name : str, default="value"
        The name the trials' values are logged under.
    study_run_name : str, optional
        The study run's name; None: the study's name.
    """

    def __init__(self, tracking_uri: str | None = None, experiment_name: str | None = None,
                 metric_name: str = "value", study_run_name: str | None = None):
        for name, value in (("tracking_uri", tracking_uri), ("experiment_name", experiment_name),
                            ("study_run_name", study_run_name)):
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(f"{name} must be a non-empty string or None, got {value!r}.")
        if not isinstance(metric_name, str) or not metric_name:
            raise ValueError(f"metric_name must be a non-empty string, got {metric_name!r}.")
        self.client = MlflowClient(tracking_uri=tracking_uri)
        self.experiment_name = experiment_name
        self.metric_name = metric_name
        self.study_run_name = study_run_name
        #: the study run's id (None before the first trial is logged; kept once it ended)
        self.study_run_id: str | None = None
        self._running = False
        self._experiment_id: str | None = None
        self._best = None
        self._n_finished = 0

    def _start(self, optimizer) -> None:
        study = optimizer.study_name
        name = self.experiment_name or study
        found = self.client.get_experiment_by_name(name)
        self._experiment_id = (found.experiment_id if found is not None
                               else self.client.create_experiment(name))
        run = self.client.create_run(self._experiment_id, run_name=self.study_run_name or study,
                                     tags={"mfbo.study_name": study,
                                           "mfbo.directions": ",".join(
                                               getattr(optimizer, "directions", None)
                                               or [optimizer.direction])})
        self.study_run_id = run.info.run_id
        self._running = True
        self._best = None
        self._n_finished = 0

    def __call__(self, trial, optimizer) -> None:
        """Log the finished ``trial`` of ``optimizer`` (what :func:`mfbo.minimize` calls)."""
        if not self._running:
            self._start(optimizer)
        run = self.client.create_run(
            self._experiment_id, run_name=f"trial {trial.id}", start_time=_ms(
                trial.start if trial.start is not None else trial.asked_at),
            tags={"mlflow.parentRunId": self.study_run_id, "mfbo.trial_id": str(trial.id),
                  "mfbo.state": trial.state, "mfbo.origin": str(trial.origin)})
        end = _ms(trial.end)
        values = getattr(trial, "values", None)
        named = ({f"{self.metric_name}_{i}": v for i, v in enumerate(values)}
                 if values is not None and len(values) > 1 else {self.metric_name: trial.value})
        metrics = [Metric(k, float(v), end, 0) for k, v in named.items() if v is not None]
        metrics += [Metric("intermediate_value", float(v), end, int(step))
                    for step, v in sorted(trial.intermediate_values.items())]
        params = [Param(k, str(v)) for k, v in trial.params.items()]
        tags = [RunTag("mfbo.error", trial.error)] if trial.error else []
        self.client.log_batch(run.info.run_id, metrics=metrics, params=params, tags=tags)
        self.client.set_terminated(run.info.run_id, status=STATUS.get(trial.state, "FAILED"),
                                   end_time=end)
        self._log_best(trial, optimizer, end)

    def _log_best(self, trial, optimizer, end: int) -> None:
        self._n_finished += 1
        if trial.state != "complete" or trial.value is None:  # (several values: no best)
            return
        sign = -1.0 if optimizer.direction == "maximize" else 1.0
        if self._best is None or sign * trial.value < sign * self._best:
            self._best = trial.value
            self.client.log_metric(self.study_run_id, f"best_{self.metric_name}",
                                   float(self._best), end, self._n_finished)

    def close(self) -> None:
        """End the study's run (FINISHED); a new study run starts if trials follow."""
        if self._running:
            self.client.set_terminated(self.study_run_id, status="FINISHED")
            self._running = False

    def __enter__(self) -> "MLflowCallback":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
