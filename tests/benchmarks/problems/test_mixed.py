"""The ``mixed`` suite: the known optima of its problems."""

import pytest

from benchmarks.problems import mixed
from benchmarks.problems.problems import get_problem


def test_known_optima_of_the_mixed_problems():
    for name in ("mixed-ackley-7d", "mixed-ackley-10d", "mixed-ackley-12d"):
        p = get_problem(name)
        best = p.objective.optimum_params()
        assert p(**best) == pytest.approx(0.0, abs=1e-12)
        # another level of a categorical moves the centre and adds its offset
        other = dict(best, c1=next(c for c in p.space["c1"].choices if c != best["c1"]))
        assert p(**other) >= 0.5
        assert p(**dict(best, z1=best["z1"] + 1 if best["z1"] < 10 else 9)) > 0.1
    pv = get_problem("pressure-vessel")
    at = dict(Ts_16ths=13, Th_16ths=7, R=42.09844559585492, L=176.63659584243945)
    assert pv(**at) == pytest.approx(mixed.PRESSURE_VESSEL_OPTIMUM, abs=1e-6)
    assert pv(**dict(at, Ts_16ths=12)) > pv(**at) + 1000  # shell too thin: penalised
    sr = get_problem("speed-reducer")
    at = dict(x1=3.5, x2=0.7, x3=17, x4=7.3, x5=7.7153199115, x6=3.3502146661, x7=5.2866544650)
    assert sr(**at) == pytest.approx(mixed.SPEED_REDUCER_OPTIMUM, abs=1e-5)
    assert sr(**dict(at, x6=3.2)) > sr(**at) + 1000  # shaft 1 too thin: penalised
