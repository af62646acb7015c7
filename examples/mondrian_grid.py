"""Mondrian grid: per-dimension lifetimes found by greedy exploration.

Fits a Mondrian grid on data whose target ignores the third input, lets the greedy search
(Balog & Teh, 2015, Section 5.2) raise lifetimes one cut at a time with incremental model
updates, and prints the lifetimes found, the inputs selected, and a prediction with its
uncertainty.

    python examples/mondrian_grid.py
"""

import numpy as np

from surrogates import MondrianGrid

rng = np.random.default_rng(0)
X = rng.uniform(size=(600, 3))
y = np.sin(2 * np.pi * X[:, 0]) + np.cos(np.pi * X[:, 1]) + 0.1 * rng.standard_normal(600)
X_train, y_train, X_val, y_val = X[:300], y[:300], X[300:], y[300:]

grid = MondrianGrid(n_grids=3, lifetimes=0.0, random_state=0).fit(X_train, y_train)
path = grid.explore(X_val, y_val, max_steps=60, patience=10)

print(f"{len(path.moved) - 1} greedy steps; validation RMSE {path.val_rmse[0]:.3f} -> "
      f"{path.val_rmse[path.best_step]:.3f} at step {path.best_step}")
print("lifetimes found:", np.round(grid.lifetimes_, 2), "(x3 does not matter)")
print("relevant inputs:", grid.relevant_dims())
print(f"{grid.n_cells_} grid cells (features); x1's training partition can change at "
      f"{grid.cut_times(0).size} lifetimes")

mean, std = grid.predict([[0.25, 0.0, 0.9], [5.0, 5.0, 5.0]], return_std=True)
print(f"at (0.25, 0, 0.9): {mean[0]:+.3f} +/- {std[0]:.3f} (truth {1 + 1:+.3f})")
print(f"far away: {mean[1]:+.3f} +/- {std[1]:.3f} (the prior)")

grid.increase(2)  # one more cut in x3: an O(C^2) update, not a refit
print("after one cut in x3, lifetimes:", np.round(grid.lifetimes_, 2))
