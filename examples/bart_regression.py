"""Bayesian additive regression trees with the particle Gibbs sampler.

Fits BART (50 trees) on a noisy 3-D function with each of the three tree samplers, and prints
the test RMSE, the posterior of the noise standard deviation, 90 % interval coverage, the
time per sweep and the lag-1 autocorrelation of the log-likelihood trace (lower mixes
better).

    python examples/bart_regression.py
"""

import numpy as np

from surrogates import BARTRegressor


def f(X):
    return 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 5 * X[:, 2]


rng = np.random.default_rng(0)
X, Xt = rng.random((300, 3)), rng.random((1000, 3))
y = f(X) + rng.standard_normal(300)  # noise sd 1

for sampler in ("pg", "cgm", "growprune"):
    bart = BARTRegressor(n_trees=50, sampler=sampler, n_burn=100, n_samples=150,
                         random_state=0).fit(X, y)
    mean = bart.predict(Xt)
    lower, upper = bart.predict_interval(Xt, coverage=0.9)
    yt = f(Xt) + rng.standard_normal(1000)
    sigma = np.sqrt(bart.sigma2_samples_)
    lag1 = np.corrcoef(bart.loglik_trace_[100:-1], bart.loglik_trace_[101:])[0, 1]
    print(f"{sampler:>9}: test RMSE {np.sqrt(np.mean((mean - f(Xt)) ** 2)):.3f}, "
          f"sigma {sigma.mean():.3f} +/- {sigma.std():.3f}, "
          f"90% coverage {np.mean((yt >= lower) & (yt <= upper)):.2f}, "
          f"{1e3 * bart.sweep_seconds_:.1f} ms/sweep, log-lik lag-1 autocorrelation "
          f"{lag1:.2f}, {bart.n_leaves_trace_[-1]:.1f} leaves per tree")
