"""Every script in examples/ runs to completion and prints what the user guide quotes or shows of
it."""

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


#: what the user guide quotes of an example's output (each quoted there verbatim)
QUOTED = {"plots.py": ["lr 0.53, width 0.18, depth 0.02, optimizer 0.01"],
          "optuna_sampler.py": ["best value 1.6100 (optimum 0.3979)"],
          "search_cv.py": ["SVC: 12 candidates, best cross-validated accuracy 0.9807",
                           "KNeighborsClassifier: 4 candidates",
                           "held-out accuracy of the refit best pipeline: 0.9711"],
          "pruning.py": ["5 of 20 trials pruned; 167 epochs trained of 200 without pruning",
                         "best validation log loss 0.2545"],
          "callbacks_lightgbm.py": ["5 of 12 trainings pruned; 311 boosting rounds of 480 "
                                    "without pruning"]}
GUIDE = pathlib.Path(__file__).parent.parent / "mfbo" / "GUIDE.md"


def printed_policy(out: str) -> str:
    """The lines of ``examples/recipe_steps.py``'s output that list the default recipe's steps
    (its first line and the indented ones), which the guide shows as they are."""
    lines = out.splitlines()
    return "\n".join([lines[0]] + [line for line in lines[1:] if line.startswith("  ")])


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, capsys, tmp_path, monkeypatch):
    """It runs and prints, and prints what the user guide quotes or shows of it."""
    needs, extra = OPTIONAL.get(path.name, (None, None))
    if needs and importlib.util.find_spec(needs) is None:
        pytest.skip(f"{path.name} needs {needs} (pip install \"mfbo[{extra}]\")")
    monkeypatch.chdir(tmp_path)  # examples may write files (plots) where they run
    monkeypatch.setattr(sys, "argv", [str(path)])  # as run without arguments, not pytest's
    runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    assert out.strip()
    guide = " ".join(GUIDE.read_text().split())  # (quotes may be wrapped over two lines)
    for quote in QUOTED.get(path.name, ()):
        assert quote in out and quote in guide, quote
    if path.name == "recipe_steps.py":
        assert printed_policy(out) in GUIDE.read_text()
