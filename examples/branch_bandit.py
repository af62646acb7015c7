"""A branch bandit: MaxUCB over the model families of a conditional space.

Run: ``python examples/branch_bandit.py``.  In a space that chooses a model family and then
that family's own hyper-parameters, a run whose first points of a family were poor for a
reason the family does not share (here a preprocessing that throws the signal away) can
take the family for a poor one and refine another for the rest of its budget.  A
:class:`~mfbo.proposal.BranchBandit` step treats the families as the arms of MaxUCB (Balef,
Vernade and Eggensperger, 2025), a max-armed bandit: an arm's index is its best scaled
reward plus a bonus that shrinks with the evaluations it has had.  When the index points
away from the incumbent's family it proposes a point of the family it chose; with
``patience=k`` only after ``k`` evaluations in a row that did not improve the best loss.
The default recipe holds ``BranchBandit(patience=6)``; this script runs it without and with
the step.  The trials it proposed have the origin ``"bandit"``.
"""

import dataclasses
import math

import mfbo
from mfbo.proposal import BranchBandit, PlateauEscape

space = {
    "preprocessing": mfbo.Categorical(["none", "compress"]),
    "model": mfbo.Categorical(["linear", "forest", "kernel"]),
    "alpha": mfbo.Real(1e-4, 10.0, log=True, when={"model": "linear"}),
    "depth": mfbo.Integer(1, 12, when={"model": "forest"}),
    "gamma": mfbo.Real(1e-3, 1e2, log=True, when={"model": "kernel"}),
}


def loss(preprocessing, model, alpha=None, depth=None, gamma=None):
    """A made-up validation loss: the linear model is best, unless the data are compressed."""
    if model == "linear":
        base = 0.02 + 0.1 * max(0.0, math.log10(alpha))
        return base + (0.6 if preprocessing == "compress" else 0.0)
    if model == "forest":
        return 0.2 + 0.01 * abs(depth - 7)
    return 0.3 + 0.05 * abs(math.log10(gamma) - 0.5)


default = mfbo.get_recipe("mondrian")
steps = [s for s in default.steps if not isinstance(s, BranchBandit)]
after = next(i for i, s in enumerate(steps) if isinstance(s, PlateauEscape)) + 1
with_bandit = [*steps[:after], BranchBandit(patience=6), *steps[after:]]
mfbo.register_surrogate("without-bandit",
                        dataclasses.replace(default, steps=tuple(steps), name=None))
mfbo.register_surrogate("with-bandit",
                        dataclasses.replace(default, steps=tuple(with_bandit), name=None))

# the design: its linear points all compressed, so a run can take the family for a poor one
design = [{"preprocessing": "compress", "model": "linear", "alpha": 1e-3},
          {"preprocessing": "compress", "model": "linear", "alpha": 1.0},
          {"preprocessing": "none", "model": "forest", "depth": 3},
          {"preprocessing": "none", "model": "kernel", "gamma": 1.0}]
for name in ("without-bandit", "with-bandit"):
    res = mfbo.minimize(loss, space, n_calls=40, surrogate=name, random_state=0,
                        initial_points=design, n_initial=4, progress_bar=False)
    origins = res.to_dataframe()["origin"].value_counts().to_dict()
    print(f"{name:15s} best {res.best_value:.3f} with {res.best_params}")
    print(f"{'':15s} proposed by: {origins}")
