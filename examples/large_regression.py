"""A Mondrian forest on 200,000 flight-like rows: fast fit, prediction intervals, online update.

Arrival delays are heavy-tailed and their spread depends on the flight (later in the day and on
bad-weather days they vary more), so a useful interval must widen and narrow per row.  The
Mondrian forest's predictive (Lakshminarayanan, Roy & Teh, 2016) gives that per-row spread;
this script checks how often the held-out delays fall inside the central Gaussian intervals.
With heavy tails no Gaussian interval is right at every level: the outer (90 %, 95 %) ones
hold about their share, the middle ones more than theirs.
"""

import time

import numpy as np
from scipy.special import ndtri

from benchmarks.problems.flights import synthetic_split
from surrogates import MondrianForestRegressor

# 200,000 synthetic training flights in time order (benchmarks/problems/flights.py documents the
# generator) and 20,000 test flights drawn at random from the same year
split = synthetic_split(200_000, n_test=20_000, seed=0, test="random")
X, y = split.X_train, split.y_train

# the empirical posterior (the default) summarises each node by its targets' mean and variance,
# so the spread of the noise is learnt from the data
model = MondrianForestRegressor(n_estimators=10, random_state=0)
start = time.perf_counter()
model.fit(X[:180_000], y[:180_000])
print(f"fit on 180,000 rows: {time.perf_counter() - start:.1f} s")

# the last 20,000 training rows arrive later: add them online, no refit
start = time.perf_counter()
for i in range(180_000, 200_000, 5_000):
    model.partial_fit(X[i:i + 5_000], y[i:i + 5_000])
print(f"partial_fit of 20,000 more rows in 4 mini-batches: {time.perf_counter() - start:.1f} s")

mean, std = model.predict(split.X_test, return_std=True)
rmse = float(np.sqrt(np.mean((split.y_test - mean) ** 2)))
print(f"test RMSE {rmse:.1f} min (std of the delays {split.y_test.std():.1f} min), "
      f"NLPD {model.nlpd(split.X_test, split.y_test):.2f}")
print(f"predictive std ranges from {np.percentile(std, 5):.0f} to {np.percentile(std, 95):.0f} "
      f"min (5th-95th percentile of the test rows)")
# model.predict_interval(X, coverage) gives mean -/+ z std; from the moments computed above:
for coverage in (0.5, 0.8, 0.9, 0.95):
    half = ndtri(0.5 + coverage / 2) * std
    inside = np.mean(np.abs(split.y_test - mean) <= half)
    print(f"central {coverage:.0%} interval holds {inside:.1%} of the test delays")

# the exact BP posterior with the papers' noise heuristic assumes nearly noise-free targets;
# noise_var="ml" takes the noise variance of the marginal-likelihood maximum instead
for noise_var in (None, "ml"):
    model.set_params(posterior="bp", noise_var=noise_var)
    print(f"BP posterior, noise_var={noise_var!r}: noise std "
          f"{np.sqrt(model.hyperparameters_['noise_var']):.1f} min, "
          f"NLPD {model.nlpd(split.X_test, split.y_test):.2f}")
