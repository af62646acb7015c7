"""The chapter-3 SMC decision tree experiment runs end to end at reduced sizes (CI smoke
test)."""

import json

import pytest

from tests.support import requires_data


@pytest.mark.slow
@requires_data("magic04.data")
@requires_data("pendigits.tra")
@requires_data("pendigits.tes")
def test_quick_smc_trees_experiment_writes_report_json_and_figures(tmp_path, capsys):
    from benchmarks.experiments import smc_trees

    smc_trees.main(["--quick", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "magic-04" in out and "Madelon-like" in out and "MCMC" in out
    design = json.loads((tmp_path / "design.json").read_text())
    assert set(design) == {"pendigits", "magic04"}
    assert set(design["magic04"]) == {"prior/node", "prior/layer", "optimal/node",
                                      "optimal/layer"}
    for cell in design["magic04"]["prior/node"].values():
        assert cell["logp"] < 0 and 0.5 < cell["accuracy"] <= 1 and cell["fit_s"] > 0
    compare = json.loads((tmp_path / "compare.json").read_text())
    assert set(compare["magic04"]) == {"SMC prior", "SMC optimal", "MCMC", "CART"}
    timing = json.loads((tmp_path / "timing.json").read_text())
    assert timing["methods"]["CART gini, min_samples_leaf=10"]["ratio_to_cart"] == 1.0
    for png in ("design_magic04.png", "design_pendigits.png", "islands.png", "madelon.png",
                "compare.png"):
        assert (tmp_path / png).stat().st_size > 10_000
    assert (tmp_path / "report.md").read_text().strip() == out.strip()


def test_madelon_like_data_has_the_madelon_shape():
    from benchmarks.experiments.smc_trees import madelon_like

    X_train, y_train, X_test, y_test = madelon_like(200, 60)
    assert X_train.shape == (200, 500) and X_test.shape == (60, 500)
    assert set(y_train) | set(y_test) == {0, 1}
