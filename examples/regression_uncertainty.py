"""Online Mondrian forest regression with predictive uncertainty.

Fits a forest on a 1-D toy problem with a gap, adds points online one at a time, and prints
the predictive mean and standard deviation inside the data, in the gap and far away.

    python examples/regression_uncertainty.py
"""

import numpy as np

from surrogates import MondrianForestRegressor

rng = np.random.default_rng(0)
X = np.concatenate([rng.uniform(0, 1, 100), rng.uniform(2, 3, 100)])[:, None]
y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(len(X))

forest = MondrianForestRegressor(n_estimators=10, min_samples_split=2, random_state=0)
forest.fit(X[:150], y[:150])
for i in range(150, 200):  # online updates: O(depth) each, no refit
    forest.partial_fit(X[i:i + 1], y[i:i + 1])

queries = np.array([[0.5], [1.5], [2.5], [10.0]])
mean, std = forest.predict(queries, return_std=True)
for q, m, s in zip(queries[:, 0], mean, std):
    print(f"x = {q:5.1f}: mean {m:+.3f}, std {s:.3f}")
lower, upper = forest.predict_interval(queries, coverage=0.9)
print(f"90% interval at x = 1.5: [{lower[1]:.3f}, {upper[1]:.3f}]")
print("exact-BP posterior std:", forest.set_params(posterior="bp").predict(queries, return_std=True)[1].round(3))
print(f"prior std(y) = {y.std():.3f}; the std grows in the gap and tends to it far away")
