"""Results of a study: best configuration, full history as a DataFrame, figures and the
importance of each dimension."""

from __future__ import annotations

import numpy as np

from .importance import Importance, functional_anova
from .plots import plot_convergence, plot_evaluations, plot_importance, plot_objective
from .surface import response_surface

__all__ = ["OptimizeResult", "plot_convergence", "plot_evaluations", "plot_objective",
           "plot_importance"]


class OptimizeResult:
    """What :func:`mfbo.minimize` returns (and :meth:`Optimizer.result`).

    Attributes
    ----------
    trials : list of Trial
        Every trial, in the order asked.
    best_value : float or None
        The smallest loss of a complete trial (None if none completed).
    best_params : dict or None
    best_trial : Trial or None
    x_iters, func_vals
        scikit-optimize-style views: params dicts and losses of the finished trials
        (``nan`` for failed ones).
    """

    def __init__(self, space, trials: list):
        self.space = space
        self.trials = trials
        done = [t for t in trials if t.state == "complete"]
        self.best_trial = min(done, key=lambda t: (t.value, t.id)) if done else None
        self.best_value = self.best_trial.value if self.best_trial else None
        self.best_params = dict(self.best_trial.params) if self.best_trial else None

    @property
    def finished(self) -> list:
        return [t for t in self.trials if t.state != "pending"]

    @property
    def x_iters(self) -> list[dict]:
        return [t.params for t in self.finished]

    @property
    def func_vals(self) -> np.ndarray:
        return np.array([t.value if t.value is not None else np.nan for t in self.finished])

    @property
    def n_failed(self) -> int:
        return sum(t.state == "failed" for t in self.trials)

    def best_so_far(self) -> np.ndarray:
        """Best loss after each finished trial, in the order they finished (nan before the
        first success)."""
        order = sorted(self.finished, key=lambda t: (t.end or 0.0, t.id))
        vals = np.array([t.value if t.state == "complete" else np.inf for t in order])
        best = np.minimum.accumulate(vals) if vals.size else vals
        return np.where(np.isinf(best), np.nan, best)

    def to_dataframe(self):
        """One row per trial: id, every parameter, value, state, error, asked/start/end
        times, duration, worker, and the extra fields returned by the objective."""
        import pandas as pd

        rows = []
        for t in self.trials:
            row = {"id": t.id, **{f"{n}": t.params.get(n) for n in self.space.names},
                   "value": t.value, "state": t.state, "error": t.error,
                   "asked_at": t.asked_at, "start": t.start, "end": t.end,
                   "duration": t.duration, "worker": t.worker}
            for k, v in (t.extra or {}).items():
                row.setdefault(k if k not in row else f"extra_{k}", v)
            rows.append(row)
        return pd.DataFrame(rows)

    def to_optuna(self, study=None, *, storage=None, study_name: str | None = None):
        """The finished trials added to an optuna study (a new minimising one when ``study``
        is None, made with ``storage`` and ``study_name``), e.g. for optuna-dashboard; needs
        optuna (:func:`mfbo.integrations.optuna.to_optuna` says how trials are carried)."""
        from .integrations.optuna import to_optuna

        return to_optuna(self, study, storage=storage, study_name=study_name)

    def __repr__(self):
        return (f"OptimizeResult(best_value={self.best_value!r}, best_params={self.best_params!r},"
                f" n_trials={len(self.trials)}, n_failed={self.n_failed})")

    # -- figures and importance (see mfbo.plots); each returns a matplotlib Figure -----------
    def plot_convergence(self, path=None, title: str | None = None, ax=None):
        """Best-so-far loss against the number of evaluations (:func:`mfbo.plot_convergence`);
        also saved when ``path`` is given."""
        return plot_convergence([self.best_so_far()], path, title=title, ax=ax)

    def plot_evaluations(self, path=None, title: str | None = None):
        """Each parameter against the loss of every complete trial
        (:func:`mfbo.plot_evaluations`); also saved when ``path`` is given."""
        return plot_evaluations(self, path, title=title)

    def plot_objective(self, path=None, **kwargs):
        """Partial dependence of the surrogate's mean loss on each dimension and pair
        (:func:`mfbo.plot_objective`, which takes the keyword arguments)."""
        return plot_objective(self, path=path, **kwargs)

    def plot_importance(self, path=None, **kwargs):
        """The fraction of the surrogate's variance each dimension explains
        (:func:`mfbo.plot_importance`, which takes the keyword arguments)."""
        return plot_importance(self, path=path, **kwargs)

    def importance(self, model=None, pairs: bool = False, method: str = "auto",
                   n_samples: int = 4096, random_state=0) -> Importance:
        """Functional ANOVA of the surrogate's mean loss (:mod:`mfbo.importance`): the
        fraction of its variance each dimension (and with ``pairs`` each pair) explains.
        ``model`` None fits a Mondrian forest to the complete trials
        (:func:`mfbo.surface.fit_forest`)."""
        f = response_surface(self, model, random_state)
        return functional_anova(f, self.space, pairs=pairs, method=method,
                                n_samples=n_samples, random_state=random_state)
