"""Integer arguments are checked before any state is touched (a bool is not an integer)."""

import pytest

from mfbo import Optimizer
from tests.support import BOX as S


@pytest.mark.parametrize("max_trials", [-1, 2.5, "3", True])
def test_max_trials_is_checked(max_trials):
    opt = Optimizer(S, random_state=0)
    with pytest.raises(ValueError, match="max_trials"):
        opt.ask(max_trials=max_trials)
    assert opt.n_trials == 0
