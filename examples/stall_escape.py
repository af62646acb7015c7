"""A stall escape, and TPE's choice as a second opinion: two steps against a run that refines
a poor basin.

Run: ``python examples/stall_escape.py``.  Degree 3 of this polynomial model is a broad basin
of mediocre losses, while degree 2 with the right regularisation is far better; with this
seed the default recipe refines degree 3 to the end.  A :class:`~mfbo.proposal.StallEscape` counts the evaluations in a row that did not
improve the best loss by 0.1 % (TuRBO's failure count) and, after ``window`` of them, proposes
the acquisition's best point away from the incumbent (with ``cells=True``: at another
categorical value or another integer cell).  A :class:`~mfbo.proposal.DensityRatioStep`
makes one proposal in ``every`` TPE's way: the point whose Parzen density among the best
observations is largest relative to the others'.  Both are options, not part of the default:
the measurements are in benchmarks/DEFAULTS.md.  Their trials have the origins ``"stall"``
and ``"density-ratio"``.
"""

import dataclasses
import math

import mfbo
from mfbo.proposal import DensityRatioStep, PlateauEscape, StallEscape

space = {"degree": mfbo.Integer(1, 3), "interaction_only": mfbo.Categorical([False, True]),
         "alpha": mfbo.Real(1e-4, 1e4, log=True)}


def loss(degree, interaction_only, alpha):
    """A made-up validation loss: degree 2 is best, but only for an alpha near 10."""
    a = math.log10(alpha)
    if degree == 2:
        return 0.17 + 0.4 * (a - 1.0) ** 2 / 9 + 0.3 * interaction_only
    return 0.25 + 0.01 * (a - 1.7) ** 2 + 0.1 * (degree == 1) + 0.3 * interaction_only


def after_plateau(step):
    """The default recipe with ``step`` right after its plateau escape."""
    default = mfbo.get_recipe("mondrian")
    steps = list(default.steps)
    at = next(i for i, s in enumerate(steps) if isinstance(s, PlateauEscape)) + 1
    steps.insert(at, step)
    return dataclasses.replace(default, steps=tuple(steps))


mfbo.register_surrogate("mondrian-stall", after_plateau(StallEscape(window=6, cells=True)))
mfbo.register_surrogate("mondrian-ratio", after_plateau(DensityRatioStep(every=4)))

for name in ("mondrian", "mondrian-stall", "mondrian-ratio"):
    res = mfbo.minimize(loss, space, n_calls=30, surrogate=name, random_state=0,
                        progress_bar=False)
    origins = res.to_dataframe()["origin"].value_counts().to_dict()
    print(f"{name:15s} best {res.best_value:.3f} with {res.best_params}")
    print(f"{'':15s} proposed by: {origins}")
