"""Every script in examples/ runs to completion."""

import importlib.util
import pathlib
import runpy
import sys

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).parent.parent / "examples").glob("*.py"))


#: examples that need an optional package (installed by the extra CI installs): the module
#: and the extra that installs it
OPTIONAL = {"configspace_space.py": ("ConfigSpace", "configspace"),
            "optuna_sampler.py": ("optuna", "optuna"),
            "dashboard.py": ("optuna_dashboard", "dashboard"),
            "callbacks_mlflow.py": ("mlflow", "mlflow"),
            "callbacks_lightgbm.py": ("lightgbm", "lightgbm")}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, capsys, tmp_path, monkeypatch):
    needs, extra = OPTIONAL.get(path.name, (None, None))
    if needs and importlib.util.find_spec(needs) is None:
        pytest.skip(f"{path.name} needs {needs} (pip install \"mfbo[{extra}]\")")
    monkeypatch.chdir(tmp_path)  # examples may write files (plots) where they run
    monkeypatch.setattr(sys, "argv", [str(path)])  # as run without arguments, not pytest's
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()
