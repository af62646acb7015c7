"""The peers (only when installed): what they search on grids, tables and mixed spaces, and
the samplers they ask for."""

import pytest

from benchmarks.harness import methods, peers
from benchmarks.problems import data
from benchmarks.problems.problems import get_problem


def _have(name):
    try:
        data.fetch_file(name, download=False)
        return True
    except FileNotFoundError:
        return False


PEERS = {"smac": "smac", "optuna": "optuna", "optuna-mv": "optuna", "optuna-indep": "optuna", "skopt-forest": "skopt",
         "skopt-gp": "skopt"}


@pytest.mark.parametrize("name", sorted(PEERS))
def test_peer_on_a_random_grid_searches_the_box_and_on_a_table_the_cells(name):
    pytest.importorskip(PEERS[name])
    r = methods.run_method(name, get_problem("branin-grid"), 5, 0)
    assert len(r.values) == 5 and None not in r.values
    assert r.continuous and r.grid is None and r.optimizer_time_s >= 0
    if _have("lda_on_grid.csv"):
        lda = get_problem("lda-grid")
        r = methods.run_method(name, lda, 5, 1)
        # every proposal was a table cell (an off-grid point would have failed the look-up)
        assert len(r.values) == 5 and None not in r.values and not r.continuous
        assert set(r.values) <= set(lda.values.tolist())


@pytest.mark.parametrize("name", sorted(PEERS))
def test_peer_on_a_mixed_problem_proposes_integers_and_levels(name):
    pytest.importorskip(PEERS[name])
    problem = get_problem("mixed-ackley-7d")  # reals, integers and a categorical of 4 levels

    class Recording:  # the problem, keeping what the peer proposed
        seen = []

        def __getattr__(self, name):
            return getattr(problem, name)

        def __call__(self, **params):
            self.seen.append(params)
            return problem(**params)  # rejects a non-integral integer or an unknown level

    r = methods.run_method(name, Recording(), 5, 0)
    assert len(r.values) == 5 and None not in r.values and r.continuous
    assert len(Recording.seen) == 5
    assert all(isinstance(p["z1"], int) and p["c1"] in problem.space["c1"].choices
               for p in Recording.seen)


def test_smac_ends_a_run_when_a_small_space_is_exhausted():
    pytest.importorskip("smac")
    problem = get_problem("sklearn-kNN-iris-acc")  # 25 x 4 = 100 configurations
    r = methods.run_method("smac", problem, 120, 0)
    assert 0 < len(r.values) <= 100 and None not in r.values


def test_optuna_mv_asks_for_the_multivariate_tpe(monkeypatch):
    optuna = pytest.importorskip("optuna")
    made = []
    real = optuna.samplers.TPESampler

    def sampler(**kwargs):
        made.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(optuna.samplers, "TPESampler", sampler)
    methods.run_method("optuna-mv", get_problem("branin"), 3, 4)
    methods.run_method("optuna", get_problem("branin"), 3, 4)
    assert made == [{"seed": 4, "multivariate": True, "group": False}, {"seed": 4}]


def test_peers_see_integers_and_categoricals():
    kind, dims = peers.peer_space(get_problem("sklearn-lasso-diabetes-mse"))
    assert kind == "mixed"
    assert dims["alpha"] == ("real", 1e-2, 1e2, True)
    assert dims["max_iter"] == ("int", 10, 5000, True)
    assert dims["fit_intercept"] == ("cat", [False, True])
    assert peers._level(dims["fit_intercept"], "True") is True
    assert peers.peer_space(get_problem("branin"))[0] == "box"
