"""Search spaces: dimensions, the space they make, and finite sets of candidates in it."""

from .dimensions import Categorical, Dimension, Integer, Ordinal, Real
from .space import Space, as_space

__all__ = ["Categorical", "Dimension", "Integer", "Ordinal", "Real", "Space", "as_space"]
