"""Bayesian optimization with an online Mondrian forest: one call, ask/tell, and a decorator.

Run: ``python examples/bayesopt_quickstart.py`` (writes convergence.png next to where it runs).
"""

import math

import mfbo
from mfbo import Categorical, Integer, Real


def branin(x1, x2):
    a, b, c, r, s, t = 1, 5.1 / (4 * math.pi**2), 5 / math.pi, 6, 10, 1 / (8 * math.pi)
    return a * (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - t) * math.cos(x1) + s


# 1. one call: minimize f(**params) over a space; (low, high) is a Real dimension
result = mfbo.minimize(branin, {"x1": (-5.0, 10.0), "x2": (0.0, 15.0)}, n_calls=40,
                       random_state=0, progress_bar=False)
print(f"best {result.best_value:.4f} at {result.best_params}")
print(result.to_dataframe()[["id", "x1", "x2", "value", "state"]].tail(3))
result.plot_convergence("convergence.png")


# 2. ask/tell with mixed dimensions; each tell is one online partial_fit of the forest
space = {"lr": Real(1e-4, 1e-1, log=True), "layers": Integer(1, 4),
         "activation": Categorical(["relu", "tanh"])}
opt = mfbo.Optimizer(space, random_state=0)
for _ in range(20):
    trial = opt.ask()
    p = trial.params
    loss = (math.log10(p["lr"]) + 2.5) ** 2 + 0.1 * (p["layers"] - 3) ** 2 + (
        p["activation"] == "tanh")
    opt.tell(trial, loss)
print("ask/tell best:", opt.best_trial.params, round(opt.best_trial.value, 4))


# 3. a decorator: the function stays callable, and gains .minimize
@mfbo.objective(x=(-2.0, 2.0), y=(-2.0, 2.0))
def bowl(x, y):
    return (x - 0.5) ** 2 + (y + 1.0) ** 2


print("decorated:", bowl(0.5, -1.0), bowl.minimize(n_calls=25, random_state=0,
                                                   progress_bar=False).best_value)
