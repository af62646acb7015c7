"""The seed of a study, from any of the forms ``random_state`` takes."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["seed_sequence"]


def seed_sequence(random_state) -> np.random.SeedSequence:
    """The seed of a study from ``random_state`` (None, an int >= 0, a SeedSequence, or a
    numpy Generator / RandomState, from which a seed is drawn)."""
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(random_state.integers(0, 2**63 - 1, size=2).tolist())
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(
            random_state.randint(0, 2**63 - 1, size=2, dtype=np.int64).tolist())
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be >= 0, got {random_state}.")
        return np.random.SeedSequence(int(random_state))
    raise TypeError(f"random_state must be None, an int, a SeedSequence or a numpy "
                    f"Generator/RandomState, got {random_state!r}.")
