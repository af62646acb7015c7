"""A portfolio of proposal policies, and what proposed each trial.

Run: ``python examples/portfolio.py``.  A :class:`~mfbo.proposal.Portfolio` step holds several
policies (arms); for each proposal it draws one by Thompson sampling over the new best
losses each has produced, so a policy that stops finding better points loses its share.
Here the default recipe's steps are one arm and a draw of the categorical choices (the
acquisition's best point for a model family drawn at random) another, on a small
choose-a-model problem whose best family is good only in a corner of its parameter.  Every
trial records its origin, read here from the results' DataFrame.
"""

import dataclasses

import mfbo
from mfbo.proposal import Arm, CategoryStep, Portfolio

space = {
    "model": mfbo.Categorical(["linear", "forest", "kernel"]),
    "alpha": mfbo.Real(1e-4, 10.0, log=True, when={"model": "linear"}),
    "depth": mfbo.Integer(1, 12, when={"model": "forest"}),
    "gamma": mfbo.Real(1e-3, 1e2, log=True, when={"model": "kernel"}),
}


def loss(model, alpha=None, depth=None, gamma=None):
    """A made-up validation loss: the linear model is best, but only for a small alpha."""
    import math

    if model == "linear":
        return 0.05 + 0.5 * min(1.0, math.log10(alpha / 1e-4) / 3)
    if model == "forest":
        return 0.2 + 0.01 * abs(depth - 7)
    return 0.3 + 0.05 * abs(math.log10(gamma) - 0.5)


default = mfbo.get_recipe("mondrian")
portfolio = dataclasses.replace(default, steps=(Portfolio(arms=(
    Arm("model", default.steps), Arm("choices", (CategoryStep(),)))),))
mfbo.register_surrogate("mondrian-portfolio", portfolio)

for name in ("mondrian", "mondrian-portfolio"):
    res = mfbo.minimize(loss, space, n_calls=40, surrogate=name, random_state=3,
                        progress_bar=False)
    origins = res.to_dataframe()["origin"].value_counts().to_dict()
    print(f"{name:19s} best {res.best_value:.3f} with {res.best_params}")
    print(f"{'':19s} proposed by: {origins}")
