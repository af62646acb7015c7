"""What the Mondrian kernel's estimators and paths share: the default ridge constant, argument
checks and the conversion between length-scale and lifetime."""

from __future__ import annotations

import numbers

import numpy as np

from .._core.validation import (check_positive, seed_sequence)


_DEFAULT_DELTA2 = 1e-4
_MAX_DENSE_BYTES = 4e9  # refuse dense C x C (or N x N) matrices above this


def lifetime_from_lengthscale(lengthscale: float) -> float:
    """Lifetime ``lambda = 1 / sigma`` of ``exp(-|x - x'|_1 / sigma)``: the lifetime is the
    inverse length-scale of the L1 Laplace kernel (Balog et al., 2016, Section 3.2), not
    ``1 / (2 sigma)`` or ``1 / (2 sigma^2)`` as some width conventions have it."""
    return 1.0 / check_positive(lengthscale, "lengthscale")


def _resolve_delta2(delta2, alpha, n_samples: int) -> float:
    """Sum-form ridge constant from ``delta2`` (sum form) or ``alpha`` (mean form,
    ``delta2 = n_samples * alpha``, scikit-learn's SGD convention)."""
    if delta2 is not None and alpha is not None:
        raise ValueError("Give either delta2 (sum form) or alpha (mean form, delta2 = "
                         "n_samples * alpha), not both.")
    if alpha is not None:
        return check_positive(alpha, "alpha") * n_samples
    if delta2 is None:
        return _DEFAULT_DELTA2
    return check_positive(delta2, "delta2")


def _check_seed(random_state) -> None:
    if isinstance(random_state, (bool, np.bool_)) or not (
            random_state is None or isinstance(random_state, (numbers.Integral,
                                                              np.random.SeedSequence,
                                                              np.random.RandomState,
                                                              np.random.Generator))):
        seed_sequence(random_state)  # raises the TypeError naming random_state
    if isinstance(random_state, numbers.Integral):
        seed_sequence(random_state)  # rejects negative seeds


def _check_lifetime(value, name="lifetime") -> float:
    return check_positive(value, name)


def _check_dense(n: int, what: str, n_matrices: int = 1) -> None:
    nbytes = 8.0 * n * n * n_matrices
    if nbytes > _MAX_DENSE_BYTES:
        kind = (f"a dense {n} x {n} matrix" if n_matrices == 1
                else f"{n_matrices} dense {n} x {n} matrices")
        raise ValueError(f"{what} would need {kind} ({nbytes / 1e9:.1f} GB); lower the "
                         f"lifetime or n_trees, set max_features, or use solver='sgd'.")


def _core_rng(ss: np.random.SeedSequence) -> np.ndarray:
    from .._core._rng_kernels import seed_states
    return seed_states(ss, 1)
