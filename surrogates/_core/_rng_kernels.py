"""Random numbers usable inside numba kernels.

Every tree owns one xoshiro256** stream, stored as a row of four ``uint64`` words in a
plain ``(n_trees, 4)`` array.  Keeping the state in an array (instead of a
``numpy.random.Generator`` object) lets one compiled call advance all trees, and makes
pickling and copying trivially exact.

Where a random value must be a function of *where* it is used (a row and a tree, a node of a
lazily realised process) rather than of how many draws came before, the kernels hash a key
with splitmix64 (Steele, Lea & Flood, 2014) instead of advancing a stream.
"""

from __future__ import annotations

from . import cache  # noqa: F401  (a writable cache place for numba before any njit)
import numpy as np
from numba import njit

_U11 = np.uint64(11)
_U27 = np.uint64(27)
_U30 = np.uint64(30)
_U31 = np.uint64(31)
_U17 = np.uint64(17)
_U45 = np.uint64(45)
_U7 = np.uint64(7)
_U23 = np.uint64(23)
_U64 = np.uint64(64)
_FIVE = np.uint64(5)
_NINE = np.uint64(9)
_TWO53_INV = 1.0 / 9007199254740992.0
#: splitmix64's increment, 2^64 divided by the golden ratio
GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def seed_states(seed_sequence: np.random.SeedSequence, n_streams: int) -> np.ndarray:
    """Return ``(n_streams, 4)`` independent xoshiro256** states from a seed sequence."""
    words = seed_sequence.generate_state(4 * n_streams, dtype=np.uint64).reshape(n_streams, 4)
    # An all-zero state is the one fixed point of xoshiro; it has probability 2^-256.
    words[np.all(words == 0, axis=1), 0] = GOLDEN_GAMMA
    return np.ascontiguousarray(words)


@njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << k) | (x >> (_U64 - k))


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def next_u64(state, t):
    """Advance stream ``t`` of ``state`` and return 64 random bits."""
    s0 = state[t, 0]
    s1 = state[t, 1]
    s2 = state[t, 2]
    s3 = state[t, 3]
    result = _rotl(s1 * _FIVE, _U7) * _NINE
    tmp = s1 << _U17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= tmp
    s3 = _rotl(s3, _U45)
    state[t, 0] = s0
    state[t, 1] = s1
    state[t, 2] = s2
    state[t, 3] = s3
    return result


@njit(cache=True, inline="always")
def unit_double(bits):
    """A double on [0, 1) from the top 53 of 64 random bits."""
    return np.float64(bits >> _U11) * _TWO53_INV


@njit(cache=True, inline="always")
def open_unit_double(bits):
    """A double on the open interval (0, 1) from the top 53 of 64 random bits (safe to take
    the logarithm of)."""
    return (np.float64(bits >> _U11) + 0.5) * _TWO53_INV


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def uniform(state, t):
    """A double uniformly distributed on [0, 1)."""
    return unit_double(next_u64(state, t))


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def exponential(state, t, rate):
    """An Exponential(rate) draw (mean 1/rate); +inf when rate is 0."""
    if rate <= 0.0:
        return np.inf
    return -np.log1p(-uniform(state, t)) / rate


@njit(cache=True, inline="always")
def mix64(z):
    """splitmix64's finaliser: a bijective avalanche mix of 64 bits."""
    z = (z ^ (z >> _U30)) * _MIX1
    z = (z ^ (z >> _U27)) * _MIX2
    return z ^ (z >> _U31)


@njit(cache=True, inline="always")
def splitmix64(x):
    """64 random bits from the key ``x``: one step of splitmix64 from state ``x``."""
    return mix64(x + GOLDEN_GAMMA)
