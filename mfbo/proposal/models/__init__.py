"""Surrogate models as the optimizer sees them: the interface (:class:`Model`), one adapter per
built-in surrogate, and the output transforms they share."""

from .bart import BARTModel
from .base import EstimatorModel, Model, RandomModel, missing_method
from .kernel import MondrianKernelModel
from .mondrian import MondrianModel
from .smac import SMACForestModel
from .targets import LOG_SHIFT, log_shift, safe_exponent, smac_log_transform

__all__ = ["Model", "MondrianModel", "MondrianKernelModel", "SMACForestModel", "BARTModel",
           "RandomModel", "EstimatorModel", "missing_method", "LOG_SHIFT", "log_shift",
           "safe_exponent", "smac_log_transform"]
