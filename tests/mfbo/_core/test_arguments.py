"""Integer and number arguments are checked before any state is touched (a bool is not a
number)."""

import pytest

from mfbo import Optimizer
from tests.support import BOX as S


@pytest.mark.parametrize("max_trials", [-1, 2.5, "3", True])
def test_max_trials_is_checked(max_trials):
    opt = Optimizer(S, random_state=0)
    with pytest.raises(ValueError, match="max_trials"):
        opt.ask(max_trials=max_trials)
    assert opt.n_trials == 0


@pytest.mark.parametrize("value", [-0.5, float("inf"), float("nan"), "1", True, None])
def test_a_nonnegative_number_is_checked(value):
    from mfbo._core.arguments import check_nonnegative

    with pytest.raises(ValueError, match=r"^w must be a finite number >= 0, got "):
        check_nonnegative(value, "w")
    assert check_nonnegative(0, "w") == 0.0 and check_nonnegative(2.5, "w") == 2.5
    assert check_nonnegative(None, "w", or_none=True) is None
    if value is not None:
        with pytest.raises(ValueError, match=r"^w must be a finite number >= 0 or None, got "):
            check_nonnegative(value, "w", or_none=True)
