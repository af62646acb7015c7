"""The one timing policy of the benchmarks."""

import pytest

from benchmarks.harness import timing


def test_median_time_warms_up_and_returns_the_last_result():
    calls = []
    out, seconds = timing.median_time(lambda: calls.append(1) or len(calls), repeats=3)
    assert len(calls) == 4 and out == 4 and seconds >= 0
    out, _ = timing.median_time(lambda: calls.append(1) or len(calls), repeats=2, warmup=0)
    assert out == 6
    with pytest.raises(ValueError, match="repeats"):
        timing.median_time(lambda: None, repeats=0)
    assert timing.timed(lambda: "x")[0] == "x"
