"""direction="maximize": the surrogate minimises the negated values, everything the user sees
is in the objective's own units, and a stored study keeps its direction."""

import json
import sqlite3

import numpy as np
import pytest

import mfbo
from mfbo import Optimizer, Study

from tests.support import SPACE, quad


def score(x, y):
    return 1.0 - quad(x, y)  # maximum 1 at (0.3, -0.2)


def test_maximize_finds_the_maximum_and_mirrors_minimize():
    kw = dict(n_calls=30, random_state=0, progress_bar=False)
    up = mfbo.minimize(lambda x, y: -quad(x, y), SPACE, direction="maximize", **kw)
    down = mfbo.minimize(quad, SPACE, **kw)
    # the surrogate sees the same losses (-(-quad) = quad): the same trials, in the same order
    assert [t.params for t in up.trials] == [t.params for t in down.trials]
    assert up.direction == "maximize" and down.direction == "minimize"
    assert up.best_value == max(up.func_vals) == -down.best_value
    # near the maximum 0, and better than the initial design (the first 7 trials)
    assert up.best_value > max(-0.03, max(up.func_vals[:7]))
    assert up.best_params == down.best_params
    np.testing.assert_allclose(up.func_vals, [-quad(**t.params) for t in up.trials])
    trace = up.best_so_far()
    assert np.all(np.diff(trace) >= 0) and trace[-1] == up.best_value
    assert list(up.to_dataframe()["value"]) == list(up.func_vals)
    assert "direction='maximize'" in repr(up)


def test_values_stay_in_user_units_and_failures_are_worst(tmp_path):
    opt = Optimizer(SPACE, direction="maximize", random_state=0, n_initial=4)
    told = []
    for i in range(6):
        t = opt.ask()
        if i == 3:
            opt.tell(t, RuntimeError("diverged"))
        else:
            told.append(opt.tell(t, score(**t.params)))
    assert opt.direction == "maximize"
    assert [t.value for t in told] == [score(**t.params) for t in told]
    assert opt.best_trial.value == max(t.value for t in told)
    # the surrogate's observations are losses: the negated values, the failure the worst one
    values = np.array([t.value for t in told])
    y = opt._obs.y
    assert y[3] == -values.min() and np.allclose(np.delete(y, 3), -values)
    result = opt.result()
    assert result.best_trial.id == opt.best_trial.id and result.n_failed == 1
    fig = result.plot_convergence(tmp_path / "c.png")
    assert fig.axes[0].get_ylabel() == "best value so far" and (tmp_path / "c.png").exists()
    assert result.plot_evaluations().axes[0].get_ylabel() == "value"
    minimising = Optimizer(SPACE, random_state=0, n_initial=4)
    assert minimising.direction == "minimize"
    assert Optimizer(SPACE).result().plot_evaluations().axes[0].get_ylabel() == "loss"


def test_a_stored_study_keeps_its_direction(tmp_path):
    db = str(tmp_path / "s.db")
    first = mfbo.minimize(score, SPACE, n_calls=8, direction="maximize", storage=db,
                          random_state=0, progress_bar=False)
    again = Optimizer(SPACE, storage=db, direction="maximize", random_state=0)
    assert again.n_finished == 8 and again.best_trial.value == first.best_value
    np.testing.assert_allclose(again._obs.y, -first.func_vals)  # replayed as losses
    before = sqlite3.connect(db).execute("SELECT COUNT(*) FROM events").fetchone()
    for direction in ("minimize", None):
        kwargs = {} if direction is None else {"direction": direction}
        with pytest.raises(ValueError, match="created with direction='maximize'"):
            Optimizer(SPACE, storage=db, **kwargs)
        with pytest.raises(ValueError, match="direction='maximize'"):
            mfbo.minimize(score, SPACE, n_calls=10, storage=db, progress_bar=False, **kwargs)
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM events").fetchone() == before
    resumed = mfbo.minimize(score, SPACE, n_calls=12, direction="maximize", storage=db,
                            random_state=0, progress_bar=False)
    assert len(resumed.trials) == 12 and resumed.best_value >= first.best_value
    assert Study.open(db).direction == "maximize"


def test_a_study_stored_before_directions_minimises(tmp_path):
    db = str(tmp_path / "old.db")
    mfbo.minimize(quad, SPACE, n_calls=4, storage=db, random_state=0, progress_bar=False)
    con = sqlite3.connect(db)
    config = json.loads(con.execute("SELECT config FROM studies").fetchone()[0])
    del config["direction"]
    con.execute("UPDATE studies SET config = ?", (json.dumps(config),))
    con.commit()
    con.close()
    assert Optimizer(SPACE, storage=db).n_finished == 4
    with pytest.raises(ValueError, match="direction='minimize'"):
        Optimizer(SPACE, storage=db, direction="maximize")


@pytest.mark.parametrize("direction", ["max", "MAXIMIZE", None, 1])
def test_a_bad_direction_is_refused(direction):
    with pytest.raises(ValueError, match="direction must be 'minimize' or 'maximize'"):
        Optimizer(SPACE, direction=direction)
    with pytest.raises(ValueError, match="direction"):
        mfbo.minimize(quad, SPACE, n_calls=3, direction=direction, progress_bar=False)
