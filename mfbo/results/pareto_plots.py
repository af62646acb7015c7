"""Figures of a study of several objectives: the trials and their Pareto front, and the
hypervolume the front dominates as the trials finish."""

from __future__ import annotations

import numpy as np

from ..study.pareto import hypervolume_history, pareto_trials

__all__ = ["plot_pareto_front", "plot_hypervolume_history"]


def plot_pareto_front(result, path=None, title: str | None = None, ax=None):
    """Every complete trial of ``result`` in the space of its objectives (two or three), the
    Pareto front marked, infeasible trials (with constraints) greyed; colour = evaluation
    order.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ._figure import finish, new_figure, target_axes

    o = result.objectives
    if o.k not in (2, 3):
        raise ValueError(f"plot_pareto_front draws two or three objectives; this study has "
                         f"{o.k}.")
    done = [t for t in result.trials if t.state == "complete"]
    front = {t.id for t in pareto_trials(result.trials, o)}
    V = np.array([t.values for t in done], dtype=float).reshape(len(done), o.k)
    ok = np.array([t.feasible for t in done], dtype=bool)
    on = np.array([t.id in front for t in done], dtype=bool)
    if o.k == 3:
        if ax is not None:
            raise ValueError("ax is not taken for three objectives (a 3-D axes is made).")
        fig = new_figure(6.0, 5.0)
        ax, owned = fig.add_subplot(projection="3d"), True
    else:
        fig, ax, owned = target_axes(ax, 5.5, 4.2)
    cols = [V[:, j] for j in range(o.k)]
    if (~ok).any():
        ax.scatter(*[c[~ok] for c in cols], c="0.75", s=12, label="infeasible")
    order = np.arange(len(done))
    ax.scatter(*[c[ok & ~on] for c in cols], c=order[ok & ~on], cmap="viridis", s=14,
               vmin=0, vmax=max(len(done) - 1, 1), label="trial")
    ax.scatter(*[c[on] for c in cols], c="red", marker="*", s=90, label="Pareto front")
    if o.k == 2 and on.any():
        P = V[on][np.argsort(V[on][:, 0])]
        ax.plot(P[:, 0], P[:, 1], c="red", lw=0.8, drawstyle="steps-post"
                if o.directions[1] == "minimize" else "steps-pre")
    labels = o.labels
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    if o.k == 3:
        ax.set_zlabel(labels[2])
    ax.legend(loc="best", fontsize="small")
    ax.set_title(title if title is not None else
                 f"Pareto front: {on.sum()} of {len(done)} complete trials")
    return finish(fig, path, owned=owned)


def plot_hypervolume_history(result, reference, path=None, title: str | None = None,
                             ax=None):
    """The hypervolume the feasible complete trials dominate, below ``reference`` (one
    value per objective, in the values' own units), against the number of finished trials.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ._figure import finish, target_axes

    hv = hypervolume_history(result.trials, result.objectives, reference)
    fig, ax, owned = target_axes(ax, 5.5, 3.8)
    ax.plot(np.arange(1, hv.size + 1), hv, c="C0")
    ax.set_xlabel("trials finished")
    ax.set_ylabel("hypervolume")
    ax.set_title(title if title is not None else "Hypervolume of the Pareto front")
    return finish(fig, path, owned=owned)
