"""The best trials of a study of several objectives: its Pareto front, and the hypervolume
the front dominates."""

from __future__ import annotations

import numpy as np

from acquisitions.pareto import hypervolume, non_dominated

from .objectives import Objectives

__all__ = ["pareto_trials", "losses_of", "hypervolume_history"]


def losses_of(trials, objectives: Objectives) -> np.ndarray:
    """The trials' losses (each value, negated where maximised): n × k."""
    return np.array([objectives.signs * np.asarray(t.values) for t in trials],
                    dtype=float).reshape(len(trials), objectives.k)


def pareto_trials(trials, objectives: Objectives) -> list:
    """The complete feasible trials that no other such trial dominates, in id order (equal
    values: each kept).  With one objective: the best trials (the ties of the best value)."""
    done = [t for t in trials if t.feasible and t.values is not None]
    if not done:
        return []
    keep = non_dominated(losses_of(done, objectives))
    return sorted((t for t, k in zip(done, keep) if k), key=lambda t: t.id)


def hypervolume_history(trials, objectives: Objectives, reference) -> np.ndarray:
    """The hypervolume the feasible complete trials dominate (in the values' own units,
    below ``reference``, a point given in the values' units: for a maximised objective it
    is a lower bound), after each finished trial in the order they finished."""
    ref = np.asarray(reference, dtype=float)
    if ref.shape != (objectives.k,) or not np.all(np.isfinite(ref)):
        raise ValueError(f"reference must be {objectives.k} finite values (one per "
                         f"objective), got {reference!r}.")
    ref = objectives.signs * ref
    order = sorted((t for t in trials if t.state != "pending"),
                   key=lambda t: (t.end or 0.0, t.id))
    out, front = [], np.empty((0, objectives.k))
    for t in order:
        if t.feasible and t.values is not None:
            front = np.vstack([front, objectives.signs * np.asarray(t.values)])
            front = front[non_dominated(front)]
        out.append(hypervolume(front, ref) if front.shape[0] else 0.0)
    return np.array(out)
