"""Acquisition functions and their maximisers.

Sees a surrogate only through ``predict(X, return_std=True)`` (and optionally
``predict_per_tree``); knows nothing of search spaces or of the optimizer.  Scores are for
minimisation of a loss and are always maximised.
"""

from .functions import (ACQUISITIONS, Acquisition, expected_improvement, ucb,
                        log_expected_improvement, lognormal_expected_improvement,
                        make_acquisition, probability_of_improvement)
from .maximizers import (enumerate_grid, finite_size, level_index, maximize_over_candidates,
                         maximize_random_local, row_keys, snap)

__all__ = ["ACQUISITIONS", "Acquisition", "expected_improvement", "ucb",
           "log_expected_improvement", "lognormal_expected_improvement", "make_acquisition",
           "probability_of_improvement", "enumerate_grid", "finite_size", "level_index",
           "maximize_over_candidates", "maximize_random_local", "row_keys", "snap"]
