"""Figures of a study, and which parameters matter.

Run: ``python examples/plots.py [OUTDIR]`` (writes four PNGs into OUTDIR, or into a new temporary
directory).  Every plot returns a matplotlib Figure made without pyplot: the backend is never
touched, ``path=`` also saves it, and in a notebook the returned figure shows itself.
"""

import math
import sys
import tempfile
from pathlib import Path

import mfbo
from mfbo import Categorical, Integer, Real


def loss(lr, width, depth, optimizer):
    """A made-up training loss: the learning rate matters most."""
    return ((math.log10(lr) + 2.5) ** 2 + 0.5 * width + 0.1 * (depth - 3) ** 2
            + (0.3 if optimizer == "sgd" else 0.0))


space = {"lr": Real(1e-5, 1e-1, log=True), "width": (0.0, 1.0), "depth": Integer(1, 6),
         "optimizer": Categorical(["adam", "sgd"])}
result = mfbo.minimize(loss, space, n_calls=40, random_state=0, progress_bar=False)
print(f"best loss {result.best_value:.4f} at {result.best_params}")

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="mfbo-plots-"))
out.mkdir(parents=True, exist_ok=True)
result.plot_convergence(out / "convergence.png")
result.plot_evaluations(out / "evaluations.png")
# partial dependence of a Mondrian forest fitted to the trials: 1-D on the diagonal, 2-D below
result.plot_objective(out / "objective.png", n_samples=128)
# functional ANOVA of the same forest: the share of its variance each parameter explains
importance = result.importance(pairs=True)
fig = mfbo.plot_importance(importance, path=out / "importance.png")
print("importance:", ", ".join(f"{n} {v:.2f}" for n, v in importance.ranked()))
print("figures in", out, ":", sorted(p.name for p in out.glob("*.png")), type(fig).__mro__[1])

# a figure can also go into axes of your own, next to other panels
from matplotlib.figure import Figure  # noqa: E402  (only for this demonstration)

panel = Figure(figsize=(10, 3.5), layout="constrained")
left, right = panel.subplots(1, 2)
mfbo.plot_convergence(result, ax=left)
mfbo.plot_importance(importance, ax=right)
panel.savefig(out / "panel.png")
