"""The steps a proposal policy is made of, in the order a recipe usually lists them.

- :class:`InitialDesign`: the first trials, before any model;
- :class:`RandomInterleave`: some proposals uniformly random (SMAC's interleaving);
- :class:`PlateauEscape`: a random proposal after a run of repeated losses;
- :class:`BranchEscape`: the acquisition's best point of other categorical choices after a run
  of proposals that kept the incumbent's;
- :class:`BranchBandit`: a point of the branch of a conditional space that MaxUCB, a max-armed
  bandit over the branches, pulls, when it is not the incumbent's;
- :class:`StallEscape`: the acquisition's best point away from the incumbent after a run of
  evaluations that did not improve the best loss;
- :class:`LocalStep`: the minimiser of a local quadratic (or isotropic, or linear) model;
- :class:`ParzenStep`: the acquisition's best among points of a Parzen density of good ones;
- :class:`DensityRatioStep`: TPE's choice, the best ratio of the good and other observations'
  Parzen densities;
- :class:`AcquisitionSearch`: the acquisition's maximiser over the space or candidate set;
- :class:`OutcomeSearch`: the same over several objectives or with constraints;
- :class:`CategoryStep`: the acquisition's best point for categorical values drawn at random;
- :class:`Portfolio`: one of several policies (:class:`Arm`) per proposal, drawn by the new
  best losses each produced.
"""

from .bandit import BranchBandit
from .base import EXHAUSTED, Context, Step, run_steps
from .branch import BranchEscape
from .category import CategoryStep
from .density_ratio import DensityRatioStep
from .initial_design import InitialDesign, PerDimension
from .interleave import RandomInterleave
from .local import LocalStep
from .outcomes import OutcomeSearch
from .parzen import ParzenStep
from .plateau import PlateauEscape
from .portfolio import Arm, Portfolio
from .search import AcquisitionSearch
from .stall import StallEscape

__all__ = ["AcquisitionSearch", "Arm", "BranchBandit", "BranchEscape", "CategoryStep",
           "Context", "DensityRatioStep", "EXHAUSTED", "InitialDesign", "LocalStep",
           "OutcomeSearch", "ParzenStep", "PerDimension", "PlateauEscape", "Portfolio",
           "RandomInterleave", "StallEscape", "Step", "run_steps"]
