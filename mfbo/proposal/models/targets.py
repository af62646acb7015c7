"""Output transforms of the models: the losses a model is fitted to, and the scale that keeps
huge losses finite."""

from __future__ import annotations

import numpy as np


__all__ = ["LOG_SHIFT", "SAFE_MAGNITUDE", "RAW_SAFE_MAGNITUDE", "check_transform", "raw_as_none",
           "log_shift", "safe_exponent", "smac_log_transform", "smac_log_constants",
           "symlog"]


def check_transform(argument: str, name) -> None:
    """``ValueError`` naming ``argument`` unless ``name`` is an output transform or None."""
    if name is not None and not (isinstance(name, str) and
                                 name in ("log", "smac-log", "rank", "raw", "symlog")):
        raise ValueError(f"{argument} must be 'log', 'smac-log', 'rank', 'raw', 'symlog' or "
                         f"None, got {name!r}.")


def symlog(values) -> np.ndarray:
    """``sign(v) log(1 + |v|)``: a constraint's value with its sign (whether it is met) and
    its zero kept and its tails compressed (a ratio such as a stress over its limit can be
    thousands where it is far from met), with slope 1 at 0."""
    values = np.asarray(values, dtype=float)
    return np.sign(values) * np.log1p(np.abs(values))


def raw_as_none(name: str | None) -> str | None:
    """The model's name of a transform: untransformed losses are None."""
    return None if name == "raw" else name


#: ``"log"`` output transform: the best loss sits this fraction of ``median - min`` above ``c``
LOG_SHIFT = 0.3


def log_shift(y: np.ndarray, rows: int | None = None, robust: bool = False) -> float:
    """``min(y) - c`` of the Mondrian model's ``"log"`` transform ``log(y - c)``:
    ``0.3 (median(y) - min(y))``, at least ``1e-3 (max(y) - min(y))`` (more than half the
    losses tied at the best) and a tiny positive floor (all equal).  With ``rows``, the
    median is that of the first ``rows`` losses only (all of them while there are fewer).

    ``robust``: the range's floor at most ``0.3`` of the median distance from the best of the
    losses above it, so that one diverging loss (``1e25`` among losses near 1) cannot set a
    shift beside which every other loss looks the same."""
    y = np.asarray(y, dtype=float)
    lo, hi = float(y.min()), float(y.max())
    mid = float(np.median(y if rows is None else y[:max(int(rows), 1)]))
    floor = 1e-3 * (hi - lo)
    if robust and hi > lo:
        floor = min(floor, LOG_SHIFT * (float(np.median(y[y > lo])) - lo))
    return max(LOG_SHIFT * (mid - lo), floor, 1e-12 * max(1.0, abs(lo)))


#: losses are divided by a power of two that brings them below this magnitude before a log
#: transform, so that differences of losses (``max - min'``) cannot overflow
SAFE_MAGNITUDE = 2.0 ** 1016


#: the same for raw losses, whose squares the forest's variances hold
RAW_SAFE_MAGNITUDE = 2.0 ** 500


def safe_exponent(y: np.ndarray, limit: float = SAFE_MAGNITUDE) -> int:
    """The ``k`` such that ``y / 2**k`` lies within ``limit`` (0 for all ordinary losses;
    larger ones are then scaled exactly)."""
    top = float(np.max(np.abs(y))) if np.size(y) else 0.0
    if top <= limit:
        return 0
    return int(np.frexp(top)[1]) - int(np.frexp(limit)[1]) + 1


def smac_log_transform(y: np.ndarray, values: np.ndarray | None = None) -> np.ndarray:
    """SMAC3's log scaling of losses: ``log((v - min') / (max - min'))``.

    ``min' = min(y) - (p5 - min(y)) - 1e-10`` with ``p5`` the 5th percentile of ``y``.
    Losses too large for these differences are first divided by a power of two (exact; the
    result changes only by the scaling of the ``1e-10`` guard).
    """
    y = np.asarray(y, dtype=float)
    v = y if values is None else np.asarray(values, dtype=float)
    k = safe_exponent(y)
    y, v = np.ldexp(y, -k), np.ldexp(v, -k)
    shifted_min, denom = smac_log_constants(y)
    return np.log(np.maximum(v - shifted_min, 1e-300) / denom)


def smac_log_constants(y: np.ndarray) -> tuple[float, float]:
    """``(min', max - min')`` of :func:`smac_log_transform` for losses ``y``."""
    lo, hi = float(y.min()), float(y.max())
    shifted_min = lo - (float(np.percentile(y, 5)) - lo) - 1e-10
    return shifted_min, max(hi - shifted_min, 1e-10)
