"""What a pruned trial of a study of one objective tells a surrogate (:attr:`mfbo.Study.obs`):
its last reported loss, carried to the full-budget scale by the complete trials that reported
the same step.

A trial stopped at step ``s`` with loss ``v`` there never showed its final loss, but the
complete trials show how losses at ``s`` turned into final losses.  Entering it with the worst
loss so far (``"worst"``, the default, as Optuna's TPE ranks pruned trials below complete ones)
leaves a surrogate fed mostly by successive halving knowing only the few trials that reached
full budget.  The other rules keep what the trial showed:

* ``"shift"``: ``v`` plus the median, over the complete trials that reported ``s``, of their
  final loss minus their loss at ``s`` (the improvement a curve makes from ``s`` on);
* ``"rank"``: ``v`` carried by the complete trials' quantile map from losses at ``s`` to final
  losses (their sorted losses at ``s`` against their sorted final losses, interpolated), and
  beyond either end by the offset of that end.

Either is at least the best complete trial's loss (a trial that was stopped is not taken for
a better one than any that finished), and falls back to ``"worst"`` while no complete trial
reported ``s``.  Only complete trials told before the pruned one count, so the row is a
function of the journal's order and a replayed study holds the rows of the uninterrupted one.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ON_PRUNED", "carried_loss", "repeated"]

#: what :attr:`mfbo.Study.obs` holds for a pruned trial of a study of one objective
ON_PRUNED = ("worst", "shift", "rank")


def repeated(trial, trials):
    """The first complete trial of ``trials`` that reported, at every step ``trial`` reported,
    the value ``trial`` reported there (None if none, or ``trial`` reported nothing): with
    deterministic training, ``trial`` repeats it and would end where it ended."""
    values = trial.intermediate_values
    if not values:
        return None
    for t in trials:
        if t.state == "complete" and t is not trial and all(
                t.intermediate_values.get(s) == v for s, v in values.items()):
            return t
    return None


def carried_loss(rule: str, trials, trial, sign: float) -> float | None:
    """The loss pruned ``trial`` enters the observations with under ``rule`` (``"shift"`` or
    ``"rank"``, see the module), from the complete ones of ``trials`` (losses: ``sign`` times
    the values); None while none of them reported ``trial``'s last step (or it reported none).
    """
    step = trial.last_step
    if step is None:
        return None
    at, final = [], []
    for t in trials:
        if t.state == "complete" and step in t.intermediate_values:
            at.append(sign * t.intermediate_values[step])
            final.append(sign * t.value)
    if not at:
        return None
    v = sign * trial.intermediate_values[step]
    at, final = np.asarray(at), np.asarray(final)
    if rule == "shift":
        loss = v + float(np.median(final - at))
    elif rule == "rank":
        at.sort()
        final.sort()
        if v <= at[0]:
            loss = v - at[0] + final[0]
        elif v >= at[-1]:
            loss = v - at[-1] + final[-1]
        else:
            loss = float(np.interp(v, at, final))
    else:
        raise ValueError(f"rule must be 'shift' or 'rank', got {rule!r}.")
    return max(loss, float(final.min()))
