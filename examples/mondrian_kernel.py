"""The Mondrian kernel: Laplace-kernel random features, lifetime selection in one sweep,
Bayesian linear regression on the features as an online surrogate with uncertainty, and that
regression as the optimizer's surrogate.

    python examples/mondrian_kernel.py
"""

import numpy as np

from surrogates import MondrianKernel, laplace_kernel, lifetime_path, relative_error

rng = np.random.default_rng(0)
X = rng.random((600, 2))
y = np.sin(6 * X[:, 0]) * np.cos(4 * X[:, 1]) + 0.05 * rng.standard_normal(600)
X_tr, y_tr, X_val, y_val, X_te, y_te = X[:400], y[:400], X[400:500], y[400:500], X[500:], y[500:]

# 1. features: sparse, exactly M non-zeros per row; inner products approximate the Laplace kernel
mk = MondrianKernel(n_trees=200, lifetime=3.0, random_state=0).fit(X_tr)
Z = mk.transform(X_tr[:5])
print(f"feature matrix {Z.shape}, non-zeros per row {np.diff(Z.indptr)}, value {Z.data[0]:.4f}")
err = np.abs(mk.kernel(X_tr[:50]) - laplace_kernel(X_tr[:50], lifetime=3.0)).max()
print(f"max |k_M - exp(-3 |x - x'|_1)| over 50 x 50 pairs with M = 200: {err:.3f}")

# 2. one sweep over all lifetimes up to 15: validation error at every cut of all trees
path = lifetime_path(X_tr, y_tr, X_val, y_val, max_lifetime=15.0, n_trees=10, delta2=0.1,
                     random_state=0)
print(f"path: {len(path.lifetimes)} lifetimes in {path.runtime[-1]:.2f} s; best lifetime "
      f"{path.best_lifetime:.2f} (validation error {path.val_error[path.best_index]:.1f} %), "
      f"max marginal likelihood at {path.best_lifetime_ml:.2f}")
model = path.refit_at(path.best_lifetime)  # same trees, truncated there: no resampling
print(f"test error at the selected lifetime: {relative_error(y_te, model.predict(X_te)):.1f} %")

# 3. Bayesian linear regression: predictive std, growing away from the data; online updates
model.set_params(prior_variance="auto")  # weight prior variance by maximum marginal likelihood
for i in range(5):
    x_new = rng.random((1, 2))
    model.partial_fit(x_new, np.sin(6 * x_new[:, 0]) * np.cos(4 * x_new[:, 1]))
mean, std = model.predict(np.array([[0.5, 0.5], [1.2, 0.5], [5.0, 5.0]]), return_std=True)
for q, m, s in zip(["inside", "just outside", "far away"], mean, std):
    print(f"{q:>12}: mean {m:+.3f}, std {s:.3f}")

# 4. the optimizer's surrogate "mondrian-kernel": that regression under the default's policy,
#    its lifetime and noise chosen by marginal likelihood as the observations come
import mfbo  # noqa: E402


def branin(x, y):
    x, y = 15 * x - 5, 15 * y
    return ((y - 5.1 / (4 * np.pi ** 2) * x ** 2 + 5 / np.pi * x - 6) ** 2
            + 10 * (1 - 1 / (8 * np.pi)) * np.cos(x) + 10)


space = {"x": mfbo.Real(0, 1), "y": mfbo.Real(0, 1)}
opt = mfbo.Optimizer(space, surrogate="mondrian-kernel", random_state=0)
for _ in range(30):
    trial = opt.ask()
    opt.tell(trial, branin(**trial.params))
lifetime, noise = opt.model.chosen  # the model's choice at its last fit
print(f"Branin, 30 evaluations: best {opt.best_trial.value:.4f} (optimum 0.3979); lifetime "
      f"{lifetime:g}, noise ratio {noise:g}")
