"""Search spaces: dimensions, the conditions that make them active or forbid combinations, the
space they make, and finite sets of candidates in it."""

from .conditions import (AllOf, AnyOf, Between, Condition, Equals, Greater, In, Less, NotEquals,
                         Relation)
from .dimensions import Categorical, Dimension, Integer, Ordinal, Real
from .space import Space, as_space

__all__ = ["AllOf", "AnyOf", "Between", "Categorical", "Condition", "Dimension", "Equals",
           "Greater", "In", "Integer", "Less", "NotEquals", "Ordinal", "Real", "Relation",
           "Space", "as_space"]
