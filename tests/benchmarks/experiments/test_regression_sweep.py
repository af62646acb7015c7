"""The regression forest's parameter sweep runs at reduced sizes (CI smoke test)."""

import pytest

from tests.support import requires_data


@pytest.mark.slow
@requires_data("cpu_act.csv")
def test_quick_parameter_sweep(capsys):
    from benchmarks.experiments import regression_sweep
    regression_sweep.main(["--quick"])
    out = capsys.readouterr().out
    assert out.count("| mutual_info | 10 | bp | 20 |") == 2  # both data sets, every setting
