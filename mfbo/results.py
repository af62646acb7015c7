"""Results of a study: best configuration, full history as a DataFrame, and plots (PNG)."""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

__all__ = ["OptimizeResult", "plot_convergence"]


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

    def __repr__(self):
        return (f"OptimizeResult(best_value={self.best_value!r}, best_params={self.best_params!r},"
                f" n_trials={len(self.trials)}, n_failed={self.n_failed})")

    def plot_convergence(self, path: str | os.PathLike, title: str | None = None) -> str:
        """Best-so-far loss against the number of evaluations, as a PNG at ``path``."""
        return plot_convergence([self.best_so_far()], path, labels=None, title=title)

    def plot_evaluations(self, path: str | os.PathLike, title: str | None = None) -> str:
        """Each parameter against the loss of every complete trial (one panel per parameter,
        colour = evaluation order, best marked), as a PNG at ``path``."""
        from matplotlib.figure import Figure

        from .space import Categorical

        done = [t for t in self.trials if t.state == "complete"]
        names = self.space.names
        fig = Figure(figsize=(3.2 * len(names), 3.0))
        axes = fig.subplots(1, len(names), squeeze=False)
        for ax, n in zip(axes[0], names):
            dim = self.space.dimensions[n]
            xs = [t.params[n] for t in done]
            bx = self.best_trial.params[n] if self.best_trial is not None else None
            if isinstance(dim, Categorical):  # choices at their positions in the list
                xs = [dim.index(x) for x in xs]
                bx = None if bx is None else dim.index(bx)
                ax.set_xticks(range(len(dim.choices)), [str(c) for c in dim.choices])
            ax.scatter(xs, [t.value for t in done], c=range(len(done)), cmap="viridis", s=14)
            if bx is not None:
                ax.scatter([bx], [self.best_value], marker="*", s=120, c="red")
            if getattr(dim, "log", False):
                ax.set_xscale("log")
            ax.set_xlabel(n)
        axes[0][0].set_ylabel("loss")
        if title:
            fig.suptitle(title)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        return os.fspath(path)


def plot_convergence(traces: Sequence[np.ndarray] | dict, path, labels=None, title=None,
                     optimum: float | None = None, log_gap: bool = False) -> str:
    """Best-so-far curves as a PNG.  ``traces`` is a list of 1-D arrays (one run each) or a
    dict ``label -> list of runs``; several runs of one label are drawn as mean ± standard
    error.  With ``optimum`` and ``log_gap`` the y axis is the log10 gap to the optimum."""
    from matplotlib.figure import Figure

    if not isinstance(traces, dict):
        traces = {labels[0] if labels else "best so far": list(traces)}
    fig = Figure(figsize=(5.5, 3.8))
    ax = fig.subplots()
    for label, runs in traces.items():
        L = max(len(r) for r in runs)
        M = np.full((len(runs), L), np.nan)
        for i, r in enumerate(runs):
            r = np.asarray(r, dtype=float)
            M[i, :len(r)] = r
            if len(r) < L and len(r):
                M[i, len(r):] = r[-1]
        if optimum is not None and log_gap:
            M = np.log10(np.maximum(M - optimum, 1e-12))
        x = np.arange(1, L + 1)
        mean = np.nanmean(M, axis=0)
        ax.plot(x, mean, label=label)
        if len(runs) > 1:
            se = np.nanstd(M, axis=0) / np.sqrt(np.sum(np.isfinite(M), axis=0).clip(1))
            ax.fill_between(x, mean - se, mean + se, alpha=0.25)
    if optimum is not None and not log_gap:
        ax.axhline(optimum, color="k", lw=0.8, ls="--", label="optimum")
    ax.set_xlabel("evaluation")
    ax.set_ylabel("log10(best - optimum)" if (optimum is not None and log_gap) else "best loss so far")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return os.fspath(path)
