"""Figures (mfbo.results.plots): matplotlib Figures made without pyplot, drawn into the
caller's axes on request, saved only when asked."""

import ast
import os
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest
from matplotlib.figure import Figure

import mfbo
from mfbo import Categorical, Integer, Ordinal, Real, Space
from mfbo.results.dependence import partial_dependence
from tests.support import ROOT, checkout_env


PNG = b"\x89PNG\r\n\x1a\n"


MIXED = {"lr": Real(1e-4, 1e-1, log=True), "x": (0.0, 1.0), "n": Integer(1, 5),
         "act": Categorical(["relu", "tanh", None]), "size": Ordinal(["S", "M", "L"]),
         "k": Categorical(["fixed"])}


def mixed_loss(lr, x, n, act, size, k):
    return (np.log10(lr) + 2) ** 2 + x + 0.1 * n + (act == "tanh") + 0.2 * "SML".index(size)


@pytest.fixture(scope="module")
def result():
    return mfbo.minimize(mixed_loss, MIXED, n_calls=20, random_state=0, progress_bar=False)


def _png(path):
    with open(path, "rb") as fh:
        return fh.read(8) == PNG


def test_every_plot_returns_a_figure_and_saves_only_when_asked(result, tmp_path, monkeypatch):
    import matplotlib

    monkeypatch.chdir(tmp_path)
    before = matplotlib.get_backend()
    figs = {"convergence": result.plot_convergence(),
            "evaluations": result.plot_evaluations(),
            "objective": result.plot_objective(n_points=8, n_points_pair=5, n_samples=16),
            "importance": result.plot_importance(pairs=True, n_samples=64),
            "module": mfbo.plot_convergence([result.best_so_far()], labels=["run"])}
    assert all(isinstance(f, Figure) for f in figs.values())
    assert not list(tmp_path.iterdir())  # nothing written without a path
    assert matplotlib.get_backend() == before
    assert figs["convergence"]._repr_png_()[:8] == PNG  # shows itself in a notebook
    pickle.loads(pickle.dumps(figs["importance"]))


def test_path_also_writes_the_file(result, tmp_path):
    for name, make in [("c.png", lambda p: result.plot_convergence(p)),
                       ("e.png", lambda p: result.plot_evaluations(path=p)),
                       ("o.png", lambda p: result.plot_objective(p, n_points=6, n_points_pair=4,
                                                                    n_samples=8)),
                       ("i.png", lambda p: mfbo.plot_importance(result, path=p, n_samples=32)),
                       ("m.png", lambda p: mfbo.plot_convergence({"a": [result]}, str(p)))]:
        assert isinstance(make(tmp_path / name), Figure)
        assert _png(tmp_path / name)
    result.plot_convergence(tmp_path / "c.svg")
    assert (tmp_path / "c.svg").read_text().lstrip().startswith("<?xml")


@pytest.fixture(scope="module")
def huge():
    """A result whose losses span +-1e308 (the extremes of float64)."""
    opt = mfbo.Optimizer(Space({"x": (0.0, 1.0), "c": Categorical(["a", "b"])}),
                         surrogate="random", random_state=0)
    for _ in range(25):
        t = opt.ask()
        opt.tell(t, 1e308 * (2 * t.params["x"] - 1) + 5e307 * (t.params["c"] == "b"))
    return opt.result()


def _exponent(values):
    """The decimal exponent of the largest magnitude (307 or 308 here)."""
    return int(np.floor(np.log10(np.abs(values).max())))


def _finite_limits(fig):
    for ax in fig.axes:
        lo, hi = ax.get_ylim()
        assert np.isfinite(lo) and np.isfinite(hi) and hi - lo < 100


# matplotlib cannot place ticks on a range beyond float64 (+-1e308 spans 2e308): such losses
# are drawn divided by a power of ten, which the axis names
def test_convergence_of_losses_near_the_float_maximum(huge):
    fig = huge.plot_convergence()
    assert fig._repr_png_()[:8] == PNG
    e = _exponent(huge.best_so_far())
    assert fig.axes[0].get_ylabel() == f"best loss so far (× 1e{e})"
    _finite_limits(fig)
    np.testing.assert_allclose(fig.axes[0].lines[0].get_ydata() * 10.0 ** e,
                               huge.best_so_far(), rtol=1e-12)
    # several runs (mean and standard error: squares of the losses) and the optimum's line
    runs = mfbo.plot_convergence({"a": [huge, huge.best_so_far() / 2]}, optimum=-1.7e308)
    assert runs._repr_png_()[:8] == PNG
    _finite_limits(runs)
    # the gap to an optimum overflows float64 too
    gap = mfbo.plot_convergence([huge], optimum=-1.7e308, log_gap=True)
    assert gap._repr_png_()[:8] == PNG
    line = gap.axes[0].lines[0].get_ydata()
    assert np.all(np.isfinite(line)) and np.all(line > 307)
    np.testing.assert_allclose(10 ** (line - 300), (huge.best_so_far() / 2 + 0.85e308) / 5e299,
                               rtol=1e-9)


def test_evaluations_of_losses_near_the_float_maximum(huge):
    fig = huge.plot_evaluations()
    assert fig._repr_png_()[:8] == PNG
    assert fig.axes[0].get_ylabel() == f"loss (× 1e{_exponent(huge.func_vals)})"
    _finite_limits(fig)


def test_objective_of_losses_near_the_float_maximum(huge):
    fig = huge.plot_objective(n_points=6, n_points_pair=4, n_samples=16)
    assert fig._repr_png_()[:8] == PNG
    assert "(× 1e30" in fig._suptitle.get_text()


def test_importance_plot_of_losses_near_the_float_maximum(huge):
    fig = huge.plot_importance(n_samples=64)
    assert fig._repr_png_()[:8] == PNG
    widths = [p.get_width() for p in fig.axes[0].patches]
    assert widths and all(np.isfinite(w) and 0 <= w <= 1.01 for w in widths)


def test_ordinary_losses_are_drawn_as_they_are(result):
    fig = result.plot_convergence()
    assert fig.axes[0].get_ylabel() == "best loss so far"
    np.testing.assert_array_equal(fig.axes[0].lines[0].get_ydata(), result.best_so_far())
    assert result.plot_evaluations().axes[0].get_ylabel() == "loss"


def test_ax_draws_into_the_callers_axes(result, tmp_path):
    fig = Figure()
    left, right = fig.subplots(1, 2)
    assert result.plot_convergence(ax=left) is fig
    imp = result.importance(n_samples=64)
    assert mfbo.plot_importance(imp, ax=right, path=tmp_path / "both.png") is fig
    assert len(left.lines) >= 1 and len(right.patches) == len(MIXED)
    assert len(fig.axes) == 2 and _png(tmp_path / "both.png")
    assert [t.get_text() for t in right.get_yticklabels()][0] == imp.ranked()[0][0]


def test_objective_matrix_labels_in_the_space_units(result):
    fig = result.plot_objective(n_points=6, n_points_pair=4, n_samples=8)
    shown = ["lr", "x", "n", "act", "size"]  # the one-value dimension is left out
    grid = [a for a in fig.axes if a.get_label() != "<colorbar>"]
    grid = grid[:25]
    assert len(grid) == 25
    bottom = grid[20:]
    assert [a.get_xlabel() for a in bottom] == shown
    assert bottom[0].get_xscale() == "log"  # a log dimension on a log axis
    assert [t.get_text() for t in bottom[3].get_xticklabels()] == ["relu", "tanh", "None"]
    assert [t.get_text() for t in bottom[4].get_xticklabels()] == ["S", "M", "L"]
    assert grid[15].get_ylabel() == "act" and grid[15].get_yscale() == "linear"
    assert grid[5].get_ylabel() == "x" and grid[0].get_xscale() == "log"
    one = result.plot_objective(dimensions="x", n_points=5, n_samples=8)
    assert [a.get_xlabel() for a in one.axes] == ["x"]


def test_objective_of_the_optimizers_own_model():
    space = {"a": (0.0, 1.0), "b": (0.0, 1.0)}
    opt = mfbo.Optimizer(space, random_state=0, n_initial=6)
    for _ in range(10):
        t = opt.ask()
        opt.tell(t, 1.0 + t.params["a"])
    fig = opt.result().plot_objective(model=opt.model, n_points=5, n_points_pair=4,
                                      n_samples=8)
    assert isinstance(fig, Figure) and len(fig.axes) >= 4


def test_bad_input_is_refused_with_the_argument_named(result):
    with pytest.raises(TypeError, match="ax"):
        result.plot_convergence(ax="left")
    with pytest.raises(TypeError, match="path"):
        result.plot_evaluations(path=3)
    with pytest.raises(ValueError, match="dimensions"):
        result.plot_objective(dimensions=["nope"])
    with pytest.raises(ValueError, match="n_points"):
        result.plot_objective(n_points=1)
    with pytest.raises(ValueError, match="n_points_pair"):
        result.plot_objective(n_points_pair=0)
    with pytest.raises(ValueError, match="n_samples"):
        result.plot_objective(n_samples=0)
    with pytest.raises(ValueError, match="method"):
        result.plot_importance(method="fanova")
    with pytest.raises(TypeError, match="model"):
        result.plot_objective(model=42)
    with pytest.raises(ValueError, match="traces"):
        mfbo.plot_convergence([])
    space = Space({"x": (0.0, 1.0)})
    with pytest.raises(ValueError, match="names"):
        partial_dependence(lambda U: U[:, 0], space, ("x", "x"))
    with pytest.raises(ValueError, match="sample"):
        partial_dependence(lambda U: U[:, 0], space, "x", sample=np.zeros((4, 3)))


def _imports(text):
    names = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_library_code_never_selects_a_backend_or_uses_pyplot():
    for pkg in ("mfbo", "surrogates", "acquisitions"):
        for path in (ROOT / pkg).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert "matplotlib.use(" not in text and "switch_backend" not in text, path
            imported = _imports(text)
            assert "matplotlib.use" not in imported, path
            assert not any(n.startswith("matplotlib.pyplot") for n in imported), path


PROBE = """
import sys
import matplotlib
used = []
matplotlib.use = lambda *a, **k: used.append(a)  # record any attempt to switch
backend = dict.__getitem__(matplotlib.rcParams, "backend")
import runpy
sys.argv = ["plots.py", sys.argv[1]]
runpy.run_path("examples/plots.py", run_name="__main__")
assert not used, used
assert "matplotlib.pyplot" not in sys.modules
assert dict.__getitem__(matplotlib.rcParams, "backend") == backend
print("backend untouched")
"""


def test_example_in_a_fresh_process_without_mplbackend(tmp_path):
    env = checkout_env()
    env.pop("MPLBACKEND", None)
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "figs")], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "backend untouched" in out.stdout
    names = sorted(p.name for p in (tmp_path / "figs").glob("*.png"))
    assert names == ["convergence.png", "evaluations.png", "importance.png", "objective.png",
                     "panel.png"]
    assert all(_png(tmp_path / "figs" / n) for n in names)
    assert os.fspath(pathlib.Path(tmp_path / "figs")) in out.stdout
