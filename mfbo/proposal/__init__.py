"""Where the next trial goes: recipes (a surrogate model and the policy that uses it), the
models, the steps a policy is made of, and the proposer that runs them."""

from .models import Model
from .proposer import Proposer
from .recipes import RECIPES, Recipe, as_recipe, get_recipe, register_surrogate
from .scoring import Acquisition
from .steps import (AcquisitionSearch, Arm, BranchBandit, BranchEscape, CategoryStep,
                    DensityRatioStep, InitialDesign, LocalStep, ParzenStep, PerDimension,
                    PlateauEscape, Portfolio, RandomInterleave, StallEscape, Step)

__all__ = ["Acquisition", "AcquisitionSearch", "Arm", "BranchBandit", "BranchEscape",
           "CategoryStep", "DensityRatioStep", "InitialDesign", "LocalStep", "Model", "ParzenStep",
           "PerDimension", "PlateauEscape", "Portfolio", "Proposer", "RECIPES", "RandomInterleave",
           "Recipe", "StallEscape", "Step", "as_recipe", "get_recipe", "register_surrogate"]
