"""Candidate sets: duplicate columns refused, duplicate rows asked once."""

import pytest

import mfbo
from mfbo import Optimizer
from tests.support import BOX as S


def test_candidates_with_duplicate_columns_or_rows():
    import pandas as pd
    grid = pd.DataFrame({"x": [0.0, 1.0, 1.0, 2.0], "y": [0.0, 1.0, 1.0, 2.0]})
    twice = pd.concat([grid, grid[["x"]]], axis=1)
    with pytest.raises(ValueError, match="duplicate column"):
        Optimizer(S, candidates=twice)
    opt = Optimizer(S, candidates=grid, random_state=0, n_initial=1)
    seen = []
    while True:
        try:
            t = opt.ask()
        except mfbo.StudyExhausted:
            break
        seen.append((t.params["x"], t.params["y"]))
        opt.tell(t, t.params["x"])
    assert sorted(seen) == [(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)]  # the repeated row once
