"""The dashboard's freshness and refresh-cost measurement, run small."""

import pytest

pytest.importorskip("optuna_dashboard", reason='pip install "mfbo[dashboard]"')

from benchmarks.harness.dashboard_latency import PAGE, browser, run  # noqa: E402


def test_every_new_trial_is_seen_and_each_request_timed():
    out = run("sqlite", trials=30, workers=2, new=4, poll=0.1, repeats=1, page_tells=1)
    assert out["freshness_seconds"]["n"] >= 4
    assert 0 < out["freshness_seconds"]["max"] < 30
    assert set(out["refresh_seconds"]) == set(PAGE) | {"page", "poll", "page_cpu", "poll_cpu"}
    # (a refresh of 30 kept trials can cost less than the processor clock's tick: 0 is fine)
    assert 0 <= out["refresh_seconds"]["page_cpu"]["max"] < 60
    assert out["refresh_seconds"]["page"]["max"] > 0
    if browser() is None:
        assert out["page_freshness_seconds"].startswith("no browser")
    else:
        assert out["page_freshness_seconds"]["n"] == 1
        assert 0 < out["page_freshness_seconds"]["max"] < 30
