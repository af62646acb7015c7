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


def test_candidates_of_a_conditional_space_leave_inactive_parameters_out():
    import pandas as pd
    space = {"kind": mfbo.Categorical(["a", "b"]), "x": mfbo.Real(0.0, 1.0),
             "y": mfbo.Real(0.0, 1.0, when={"kind": "b"})}
    rows = [{"kind": "a", "x": 0.1}, {"kind": "b", "x": 0.2, "y": 0.4}, {"kind": "a", "x": 0.7}]
    for cands in (rows, pd.DataFrame(rows)):
        opt = Optimizer(space, random_state=0, n_initial=1, candidates=cands)
        seen = []
        for _ in range(3):
            t = opt.ask()
            seen.append(t.params)
            opt.tell(t, t.params["x"])
        assert sorted(seen, key=lambda p: p["x"]) == rows[:2] + rows[2:]
    with pytest.raises(ValueError, match=r"missing parameter\(s\) \['y'\]"):
        Optimizer(space, candidates=[{"kind": "b", "x": 0.2}])
