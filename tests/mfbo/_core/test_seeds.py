"""Seeds: numpy generators seed an optimizer."""

import numpy as np

from mfbo import Optimizer
from tests.support import BOX as S


def test_numpy_generators_seed_an_optimizer():
    a = Optimizer(S, random_state=np.random.default_rng(5)).ask().params
    b = Optimizer(S, random_state=np.random.default_rng(5)).ask().params
    c = Optimizer(S, random_state=np.random.RandomState(5)).ask().params
    assert a == b and isinstance(c["x"], float)
