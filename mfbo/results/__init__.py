"""What a study found: the result (best configuration, history as a DataFrame), its figures,
the importance of each dimension and partial dependence on them."""

from .importance import Importance
from .plots import (plot_convergence, plot_evaluations, plot_importance,
                    plot_intermediate_values, plot_objective)
from .result import OptimizeResult

__all__ = ["Importance", "OptimizeResult", "plot_convergence", "plot_evaluations",
           "plot_importance", "plot_intermediate_values", "plot_objective"]
