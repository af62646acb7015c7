"""Scores of a Gaussian predictive ``N(mean, std^2)``: log density, interval coverage and
calibration, the observed minus nominal coverage of central intervals (as in
Lakshminarayanan et al., 2016 (AISTATS), Table 2)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.special import ndtri

__all__ = ["Z_LEVELS", "CALIBRATION_TOL", "STD_FLOOR", "gaussian_nlpd", "interval_coverage",
           "calibration", "is_calibrated"]

#: nominal coverages of the central intervals checked
Z_LEVELS = tuple(round(0.1 * k, 1) for k in range(1, 10))
#: largest coverage error (absolute) of a calibrated predictive
CALIBRATION_TOL = 0.05
#: smallest std a density is evaluated with (all trees agreeing gives std 0)
STD_FLOOR = 1e-9


def gaussian_nlpd(y: np.ndarray, mean: np.ndarray, std: np.ndarray) -> float:
    """Mean negative log density of ``y`` under ``N(mean, std^2)``, std floored at
    :data:`STD_FLOOR`."""
    var = np.maximum(std, STD_FLOOR) ** 2
    return float(np.mean(0.5 * np.log(2 * np.pi * var) + 0.5 * (y - mean) ** 2 / var))


def interval_coverage(y: np.ndarray, mean: np.ndarray, std: np.ndarray, z: float) -> float:
    """Fraction of ``y`` inside the central ``z`` Gaussian interval ``mean -/+ q std``."""
    half = ndtri(0.5 + 0.5 * z) * std
    return float(np.mean(np.abs(y - mean) <= half))


def calibration(y: np.ndarray, mean: np.ndarray, std: np.ndarray) -> list[float]:
    """Observed minus nominal coverage for each level in :data:`Z_LEVELS`."""
    return [interval_coverage(y, mean, std, z) - z for z in Z_LEVELS]


def is_calibrated(errors: Sequence[float]) -> bool:
    """Whether every coverage error is within +/- :data:`CALIBRATION_TOL`."""
    return all(abs(e) <= CALIBRATION_TOL for e in errors)
