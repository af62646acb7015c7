"""Stop a LightGBM training whose trial the study's pruner gives up on.

:class:`LightGBMPruningCallback` is a LightGBM training callback
(``lightgbm.train(..., callbacks=[...])``, or the ``callbacks`` of a scikit-learn estimator's
``fit``): after each boosting round it reports one validation metric to the running mfbo
trial (:meth:`mfbo.optimize.handle.TrialHandle.report`, the round as the step) and, when
:meth:`~mfbo.optimize.handle.TrialHandle.should_prune` says so, raises
:class:`mfbo.TrialPruned`, which ends the training and records the trial pruned.
"""

from __future__ import annotations

import importlib

try:
    importlib.import_module("lightgbm")
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('LightGBMPruningCallback needs LightGBM; install it with: pip install '
                      '"mfbo[lightgbm]" (or pip install lightgbm)') from exc

from ...study.trial import TrialPruned

__all__ = ["LightGBMPruningCallback"]


class LightGBMPruningCallback:
    """Report ``metric`` on the validation set ``valid_name`` to ``trial`` after each
    boosting round, and stop the training when the trial is to be pruned.

    Parameters
    ----------
    trial : TrialHandle
        The running trial: what :func:`mfbo.minimize` passes an objective that declares a
        ``trial`` parameter (in an ask/tell loop, ``TrialHandle(optimizer, trial.id,
        trial.params)``).
    metric : str
        A metric LightGBM evaluates (``"l2"``, ``"binary_logloss"``, ``"auc"``...).  It is
        reported as it is: the study's direction must be the metric's (maximize ``"auc"``).
    valid_name : str, default="valid_0"
        The validation set's name (LightGBM's default name of the first one).
    """

    def __init__(self, trial, metric: str, valid_name: str = "valid_0"):
        if not callable(getattr(trial, "report", None)) \
                or not callable(getattr(trial, "should_prune", None)):
            raise TypeError(f"trial must be a trial handle with report() and should_prune(), "
                            f"got {type(trial).__name__}.")
        for name, value in (("metric", metric), ("valid_name", valid_name)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"{name} must be a non-empty string, got {value!r}.")
        self.trial = trial
        self.metric = metric
        self.valid_name = valid_name
        #: LightGBM calls it after each round, after its own callbacks that record results
        self.order = 30

    def __call__(self, env) -> None:
        found = [entry[2] for entry in env.evaluation_result_list
                 if entry[0] == self.valid_name and entry[1] == self.metric]
        if not found:
            known = sorted({f"{entry[0]}/{entry[1]}" for entry in env.evaluation_result_list})
            raise ValueError(f"metric {self.metric!r} on valid_name {self.valid_name!r} is not "
                             f"evaluated by this training; it evaluates "
                             f"{known or 'nothing (pass valid_sets)'}.")
        step = env.iteration - env.begin_iteration
        self.trial.report(float(found[0]), step)
        if self.trial.should_prune():
            raise TrialPruned(f"pruned after boosting round {step} ({self.valid_name} "
                              f"{self.metric} {found[0]:.6g})")
