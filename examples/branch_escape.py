"""A branch escape: leaving the incumbent's categorical choices now and then.

Run: ``python examples/branch_escape.py``.  In a space with categorical parameters (here a
model family, each with its own hyper-parameter) a run can settle on the family of its best
early point and refine it for the rest of the budget.  A
:class:`~mfbo.proposal.BranchEscape` step, placed after the default recipe's plateau escape,
watches the proposals: after ``window`` of them in a row with the incumbent's categorical
values it proposes a point with other values (the acquisition's best there, its best
categorical neighbour of the incumbent, or a random one), for ``burst`` proposals.  It is an
option, not part of the default: the measurements are in benchmarks/DEFAULTS.md.  The
trials it proposed have the origin ``"branch"``.
"""

import dataclasses
import math

import mfbo
from mfbo.proposal import BranchEscape, PlateauEscape

space = {
    "model": mfbo.Categorical(["linear", "forest", "kernel"]),
    "alpha": mfbo.Real(1e-4, 10.0, log=True, when={"model": "linear"}),
    "depth": mfbo.Integer(1, 12, when={"model": "forest"}),
    "gamma": mfbo.Real(1e-3, 1e2, log=True, when={"model": "kernel"}),
}


def loss(model, alpha=None, depth=None, gamma=None):
    """A made-up validation loss: the linear model is best, but only for a small alpha."""
    if model == "linear":
        return 0.05 + 0.5 * min(1.0, math.log10(alpha / 1e-4) / 3)
    if model == "forest":
        return 0.2 + 0.01 * abs(depth - 7)
    return 0.3 + 0.05 * abs(math.log10(gamma) - 0.5)


default = mfbo.get_recipe("mondrian")
steps = list(default.steps)
after = next(i for i, s in enumerate(steps) if isinstance(s, PlateauEscape)) + 1
steps.insert(after, BranchEscape(window=4, burst=2))
mfbo.register_surrogate("mondrian-branch-escape", dataclasses.replace(default, steps=tuple(steps)))

for name in ("mondrian", "mondrian-branch-escape"):
    res = mfbo.minimize(loss, space, n_calls=30, surrogate=name, random_state=3,
                        progress_bar=False)
    origins = res.to_dataframe()["origin"].value_counts().to_dict()
    print(f"{name:23s} best {res.best_value:.3f} with {res.best_params}")
    print(f"{'':23s} proposed by: {origins}")
