"""Baselines: exact Laplace kernel ridge regression, random Fourier features and random
binning, the kernel-width search, and SMAC's random forest."""

from .._core.exports import lazy_exports

_WHERE = {"LaplaceKernelRidge": ".laplace", "laplace_kernel": ".laplace",
          "RandomFourierFeatures": ".random_features",
          "RandomBinningFeatures": ".random_features", "select_width": ".width_search",
          "SMACRandomForestRegressor": ".smac_forest"}
__all__ = list(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
