"""Figures of a study: convergence, evaluations, the intermediate values the trials reported,
the objective's partial dependence and the importance of each dimension.

Each function returns a :class:`mfbo.results._figure.Figure` (a matplotlib Figure made without pyplot:
the backend is never selected or changed) and saves nothing unless ``path=`` is given, which
also writes the figure (format from the extension).  The single-panel figures (convergence,
importance) draw into the caller's axes with ``ax=``.  Axes are labelled in the space's units:
log axes for log dimensions, choices and ordinal values as ticks.

In a conditional space a trial is drawn in a parameter's panel only where the parameter is
active in it (the best one too), the partial dependence of a dimension is that of the
configurations where it is active (:mod:`mfbo.results.dependence`; left blank where there is
none) and its importance is measured there (:mod:`mfbo.results.importance`).  A panel with
nothing to draw says so.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Sequence

import numpy as np

from .._core.arguments import check_int
from .dependence import partial_dependence
from .importance import Importance, functional_anova
from ..space import Categorical, Ordinal
from .surface import response_surface, search_sample

__all__ = ["plot_convergence", "plot_evaluations", "plot_intermediate_values", "plot_objective",
           "plot_importance"]

#: how the learning curves of :func:`plot_intermediate_values` are drawn, by trial state
CURVE_STYLES = {"complete": dict(color="C0", lw=1.0, alpha=0.8),
                "pruned": dict(color="C3", lw=0.8, alpha=0.6),
                "failed": dict(color="0.5", lw=0.8, alpha=0.6, ls=":"),
                "pending": dict(color="0.5", lw=0.8, alpha=0.6, ls="--")}

#: discrete dimensions with at most this many values get a marker per value
MAX_MARKED_LEVELS = 20

#: losses beyond this magnitude are drawn divided by a power of ten, which the axis names:
#: matplotlib's limits and ticks take differences of the values, and the spread of several runs
#: their squares, which overflow float64 near its maximum
DISPLAY_LIMIT = 1e150


def _trace(run) -> np.ndarray:
    return np.asarray(run.best_so_far() if hasattr(run, "best_so_far") else run, dtype=float)


def _display_exponent(*values) -> int:
    """The power of ten losses ``values`` (arrays) are drawn divided by: 0 unless the largest
    finite one exceeds :data:`DISPLAY_LIMIT` in magnitude, else its decimal exponent."""
    top = 0.0
    for v in values:
        v = np.abs(np.asarray(v, dtype=float))
        top = max(top, float(np.max(v[np.isfinite(v)], initial=0.0)))
    return int(np.floor(np.log10(top))) if top > DISPLAY_LIMIT else 0


def _shown(values, exponent: int):
    """``values`` as drawn: divided by ``10^exponent``."""
    return np.asarray(values, dtype=float) / 10.0 ** exponent if exponent else values


def _label(text: str, exponent: int) -> str:
    return f"{text} (× 1e{exponent})" if exponent else text


def _log10_gap(M: np.ndarray, optimum: float) -> np.ndarray:
    """``log10(M - optimum)``, floored at -12, also where the difference overflows float64
    (taken of the halves there)."""
    with np.errstate(over="ignore"):
        gap = M - optimum
    over = np.isinf(gap) & np.isfinite(M)
    if not over.any():
        return np.log10(np.maximum(gap, 1e-12))
    gap = np.where(over, 0.5 * M - 0.5 * optimum, gap)
    return np.log10(np.maximum(gap, 1e-12)) + np.where(over, np.log10(2.0), 0.0)


def plot_convergence(traces, path=None, labels: Sequence[str] | None = None,
                     title: str | None = None, optimum: float | None = None,
                     log_gap: bool = False, ax=None):
    """Best-so-far loss against the number of evaluations.

    Parameters
    ----------
    traces : OptimizeResult, list or dict
        A result, a list of runs (each a result or a 1-D array of best-so-far losses) or a
        dict ``label -> list of runs``.  Several runs of one label are drawn as mean ±
        standard error.
    path : path, optional
        Also save the figure there.
    labels : list of str, optional
        The label of a list of runs (its first element).
    title : str, optional
    optimum : float, optional
        Drawn as a dashed line; with ``log_gap`` the y axis is ``log10(best - optimum)``.
    ax : matplotlib Axes, optional
        Draw into these axes (its figure is returned) instead of a new figure.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ._figure import finish, target_axes

    if hasattr(traces, "best_so_far"):
        traces = [traces]
    if not isinstance(traces, dict):
        traces = {labels[0] if labels else "best so far": list(traces)}
    if not traces or any(len(runs) == 0 for runs in traces.values()):
        raise ValueError("traces must hold at least one run per label.")
    fig, ax, owned = target_axes(ax, 5.5, 3.8)
    traces = {label: [_trace(r) for r in runs] for label, runs in traces.items()}
    gap = optimum is not None and log_gap
    e = 0 if gap else _display_exponent(*[r for runs in traces.values() for r in runs],
                                        [] if optimum is None else [optimum])
    for label, runs in traces.items():
        L = max(len(r) for r in runs)
        M = np.full((len(runs), L), np.nan)
        for i, r in enumerate(runs):
            M[i, :len(r)] = r
            if len(r) < L and len(r):
                M[i, len(r):] = r[-1]
        M = _log10_gap(M, optimum) if gap else _shown(M, e)
        x = np.arange(1, L + 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN before a first success
            mean = np.nanmean(M, axis=0)
            line, = ax.plot(x, mean, label=label)
            if len(runs) > 1:
                se = np.nanstd(M, axis=0) / np.sqrt(np.sum(np.isfinite(M), axis=0).clip(1))
                ax.fill_between(x, mean - se, mean + se, alpha=0.25, color=line.get_color())
    if optimum is not None and not log_gap:
        ax.axhline(_shown(optimum, e), color="k", lw=0.8, ls="--", label="optimum")
    ax.set_xlabel("evaluation")
    ax.set_ylabel("log10(best - optimum)" if gap else _label("best loss so far", e))
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    return finish(fig, path, owned)


def plot_intermediate_values(result, path=None, title: str | None = None, ax=None):
    """The values each trial reported against their steps (its learning curve), coloured by
    the trial's state: complete, pruned (stopped early), failed or pending.

    Parameters
    ----------
    result : OptimizeResult
    path : path, optional
        Also save the figure there.
    title : str, optional
    ax : matplotlib Axes, optional
        Draw into these axes (its figure is returned) instead of a new figure.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ._figure import finish, target_axes

    fig, ax, owned = target_axes(ax, 5.5, 3.8)
    labelled = set()
    for t in result.trials:
        if not t.intermediate_values:
            continue
        steps = sorted(t.intermediate_values)
        label = None if t.state in labelled else t.state
        labelled.add(t.state)
        ax.plot(steps, [t.intermediate_values[s] for s in steps], marker=".", ms=3,
                label=label, **CURVE_STYLES[t.state])
    if labelled:
        ax.legend(fontsize=8)
    else:
        _say(ax, "no trial reported an intermediate value")
    ax.set_xlabel("step")
    ax.set_ylabel("intermediate value")
    if title:
        ax.set_title(title)
    return finish(fig, path, owned)


# -- axes in the space's units ---------------------------------------------------------------
def _positions(dim, values) -> np.ndarray:
    """Where values of ``dim`` sit on an axis: choices at their index, numbers as they are."""
    if isinstance(dim, Categorical):
        return np.array([dim.index(v) for v in values], dtype=float)
    return np.asarray(values, dtype=float)


def _trial_positions(dim, name: str, trials) -> np.ndarray:
    """Where each trial's value of ``name`` sits on an axis, nan where it is inactive (a
    point matplotlib leaves out)."""
    return np.array([_positions(dim, [t.params[name]])[0] if name in t.params else np.nan
                     for t in trials], dtype=float)


def _say(ax, text: str, *dims) -> None:
    """Write why a panel is empty in its middle; its axes (x, then y) span ``dims``' ranges,
    as they would with points on them (choices are spanned by :func:`_format_axis`)."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=8,
            color="0.4")
    for limits, dim in zip((ax.set_xlim, ax.set_ylim), dims):
        if not isinstance(dim, Categorical):
            limits(dim.low, dim.high)


def _format_axis(ax, which: str, dim) -> None:
    axis = ax.xaxis if which == "x" else ax.yaxis
    if isinstance(dim, Categorical):
        labels = [str(c) for c in dim.choices]
        axis.set_ticks(range(len(labels)), labels)
        if which == "x" and (len(labels) > 4 or max(map(len, labels)) > 6):
            for t in axis.get_ticklabels():
                t.set_rotation(45)
                t.set_horizontalalignment("right")
        pad = 0.5
        (ax.set_xlim if which == "x" else ax.set_ylim)(-pad, len(labels) - 1 + pad)
    elif getattr(dim, "log", False):
        (ax.set_xscale if which == "x" else ax.set_yscale)("log")


def _is_grid_like(dim, levels) -> bool:
    """Drawn cell by cell in 2-D (choices and ordinal values, short integer ranges)."""
    return isinstance(dim, Categorical) or 0 < abs(int(levels)) <= MAX_MARKED_LEVELS


def plot_evaluations(result, path=None, title: str | None = None):
    """Each parameter against the loss of every complete trial: one panel per parameter,
    colour = evaluation order, the best trial starred (a trial only where the parameter is
    active in it).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ._figure import finish, new_figure

    done = [t for t in result.trials if t.state == "complete"]
    space = result.space
    names = space.names
    fig = new_figure(3.2 * len(names), 3.0)
    axes = fig.subplots(1, len(names), squeeze=False)[0]
    best = result.best_trial
    losses = [t.value for t in done]
    e = _display_exponent(losses)
    for ax, n in zip(axes, names):
        dim = space.dimensions[n]
        xs = _trial_positions(dim, n, done)
        ax.scatter(xs, _shown(losses, e), c=range(len(done)), cmap="viridis", s=14)
        if best is not None and n in best.params:
            ax.scatter(_positions(dim, [best.params[n]]), _shown([best.value], e), marker="*",
                       s=120, c="red")
        if done and np.isnan(xs).all():
            _say(ax, "inactive in every trial", dim)
        _format_axis(ax, "x", dim)
        ax.set_xlabel(n)
    axes[0].set_ylabel(_label("loss", e))
    if title:
        fig.suptitle(title)
    return finish(fig, path)


def plot_objective(result, model=None, dimensions: Sequence[str] | None = None,
                   n_points: int = 40, n_points_pair: int = 20, n_samples: int = 256,
                   random_state=0, path=None, title: str | None = None):
    """Partial dependence of the surrogate's mean loss, as a matrix of panels.

    The diagonal shows the 1-D partial dependence on each dimension (the evaluated values as a
    rug, the best one dashed red); below it, the 2-D partial dependence on each pair (filled
    contours, or cells for choices and short integer ranges; one colour scale), with the
    evaluated points in black and the best one starred.  The mean is averaged over
    ``n_samples`` scrambled-Sobol points of the other dimensions (:mod:`mfbo.results.dependence`);
    in a conditional space over those where the dimensions are active.

    Parameters
    ----------
    result : OptimizeResult
    model : optional
        The surface to show.  None: a Mondrian forest fitted to the result's complete trials,
        on the losses as they are (:func:`mfbo.results.surface.fit_forest`).  Otherwise an mfbo
        ``Model`` (e.g. ``optimizer.model``: its mean is on its own output scale, the log of
        the shifted losses for ``"mondrian"``), a fitted estimator whose ``predict`` takes
        unit-cube rows, or a callable ``f(U)``.
    dimensions : list of str, optional
        The dimensions to show (default: every one with more than one value).
    n_points : int, default=40
        Grid points per dimension of the 1-D panels (every value of a discrete dimension with
        fewer).
    n_points_pair : int, default=20
        The same for the 2-D panels (each costs ``n_points_pair ** 2 * n_samples``
        predictions).
    n_samples : int, default=256
        Points of the other dimensions averaged over (scikit-optimize uses 250).
    random_state : int or None, default=0
        Seeds the forest (when ``model`` is None) and the Sobol points.
    path : path, optional
        Also save the figure there.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.colors import Normalize

    from ._figure import finish, new_figure

    space = result.space
    if dimensions is None:
        names = [n for n, k in zip(space.names, space.levels) if abs(int(k)) != 1]
        names = names or list(space.names)
    else:
        if isinstance(dimensions, str):
            dimensions = [dimensions]
        names = list(dimensions)
        bad = [n for n in names if n not in space.dimensions]
        if bad or not names or len(set(names)) != len(names):
            raise ValueError(f"dimensions must be distinct names of the space {space.names}, "
                             f"got {dimensions!r}.")
    n_points = check_int(n_points, "n_points", 2)
    n_points_pair = check_int(n_points_pair, "n_points_pair", 2)
    n_samples = check_int(n_samples, "n_samples")
    f = response_surface(result, model, random_state)
    sample = search_sample(space, n_samples, np.random.default_rng(random_state))
    dims = [space.dimensions[n] for n in names]
    levels = [space.levels[space.names.index(n)] for n in names]
    done = [t for t in result.trials if t.state == "complete"]
    best = result.best_trial
    seen = [_trial_positions(d, n, done) for n, d in zip(names, dims)]
    top = [None if best is None or n not in best.params else _positions(d, [best.params[n]])[0]
           for n, d in zip(names, dims)]

    one = [partial_dependence(f, space, n, n_points, sample=sample) for n in names]
    two = {(i, j): partial_dependence(f, space, (names[j], names[i]), n_points_pair,
                                      sample=sample)
           for i in range(len(names)) for j in range(i)}  # row i, column j below the diagonal
    e = _display_exponent(*[pd.mean for pd in one], *[pd.mean for pd in two.values()])
    if e:
        one = [replace(pd, mean=_shown(pd.mean, e)) for pd in one]
        two = {key: replace(pd, mean=_shown(pd.mean, e)) for key, pd in two.items()}
    finite = [pd.mean[np.isfinite(pd.mean)] for pd in two.values()]
    lo = min([m.min() for m in finite if m.size], default=0.0)
    hi = max([m.max() for m in finite if m.size], default=1.0)
    norm = Normalize(lo, hi if hi > lo else lo + 1.0)

    k = len(names)
    fig = new_figure(2.5 * k + 1.2, 2.3 * k + 0.6, layout="constrained")
    axes = fig.subplots(k, k, squeeze=False)
    mappable = None
    for i in range(k):
        for j in range(k):
            ax = axes[i][j]
            if j > i:
                ax.axis("off")
                continue
            if i == j:
                _diagonal(ax, dims[i], levels[i], one[i], seen[i], top[i])
                if k > 1:
                    ax.yaxis.tick_right()
                ax.set_ylabel(_label("partial dependence", e) if k == 1 else "")
            else:
                m = _pair(ax, dims[j], dims[i], levels[j], levels[i], two[(i, j)], seen[j],
                          seen[i], top[j], top[i], norm)
                mappable = mappable if m is None else m
                _format_axis(ax, "y", dims[i])
                if j == 0:
                    ax.set_ylabel(names[i])
                else:
                    ax.tick_params(labelleft=False)
            _format_axis(ax, "x", dims[j])
            if i == k - 1:
                ax.set_xlabel(names[j])
            else:
                ax.tick_params(labelbottom=False)
    if mappable is not None:  # in the empty panel at the top right
        cax = axes[0][k - 1].inset_axes([0.55, 0.05, 0.08, 0.9])
        fig.colorbar(mappable, cax=cax, label=_label("partial dependence", e))
    where = ", where the dimensions are active" if space.constrained else ""
    fig.suptitle(title or f"partial dependence of the mean loss{_label('', e)} ({n_samples} "
                          f"samples per point{where})")
    return finish(fig, path)


def _diagonal(ax, dim, levels, pd, seen, top) -> None:
    x = _positions(dim, pd.values[0])
    if isinstance(dim, Categorical) and not isinstance(dim, Ordinal):  # unordered: no line
        ax.plot(x, pd.mean, "o", ms=5)
    elif 0 < abs(int(levels)) <= MAX_MARKED_LEVELS:
        ax.plot(x, pd.mean, "o-", ms=3.5)
    else:
        ax.plot(x, pd.mean)
    ax.plot(seen, np.full(len(seen), 0.02), "|", color="k", alpha=0.5, ms=6,
            transform=ax.get_xaxis_transform())
    if top is not None:
        ax.axvline(top, color="red", ls="--", lw=0.8)
    if np.isnan(pd.mean).all():
        _say(ax, "never active", dim)


def _pair(ax, dx, dy, lx, ly, pd, sx, sy, tx, ty, norm):
    X, Y = _positions(dx, pd.values[0]), _positions(dy, pd.values[1])
    Z = np.ma.masked_invalid(pd.mean.T)  # rows follow y; blank where never active
    m = None
    if Z.mask.all():
        _say(ax, "never active together", dx, dy)
    elif _is_grid_like(dx, lx) or _is_grid_like(dy, ly) or len(X) < 2 or len(Y) < 2:
        m = ax.pcolormesh(X, Y, Z, shading="nearest", cmap="viridis", norm=norm)
    else:
        m = ax.contourf(X, Y, Z, levels=np.linspace(norm.vmin, norm.vmax, 13), cmap="viridis",
                        norm=norm, extend="neither")
    ax.scatter(sx, sy, c="k", s=6, lw=0)
    if tx is not None and ty is not None:
        ax.scatter([tx], [ty], marker="*", c="red", s=90, edgecolors="white", linewidths=0.5)
    return m


def plot_importance(result, model=None, pairs: bool = False, method: str = "auto",
                    n_samples: int = 4096, random_state=0, max_pairs: int = 10, ax=None,
                    path=None, title: str | None = None):
    """The fraction of the surrogate's variance each dimension explains (functional ANOVA,
    :mod:`mfbo.results.importance`), as horizontal bars from the largest down; a dimension
    with a condition is measured where it is active, and its bar says how often that is.

    Parameters
    ----------
    result : OptimizeResult or Importance
        A result (its surrogate is decomposed) or a decomposition already made
        (:func:`mfbo.results.importance.functional_anova`; the next four arguments are then unused).
    model : optional
        The surface to decompose; None: a Mondrian forest fitted to the result's complete
        trials (see :func:`plot_objective`).
    pairs : bool, default=False
        Also the interaction of each pair of dimensions (the ``max_pairs`` largest shown).
    method : {"auto", "exact", "sobol"}, default="auto"
        ``"exact"`` enumerates a finite space; ``"sobol"`` estimates from ``n_samples``
        scrambled-Sobol points per matrix.
    n_samples : int, default=4096
    random_state : int or None, default=0
    max_pairs : int, default=10
    ax : matplotlib Axes, optional
        Draw into these axes (its figure is returned).
    path : path, optional
        Also save the figure there.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ._figure import finish, target_axes

    if isinstance(result, Importance):
        imp = result
    else:
        f = response_surface(result, model, random_state)
        imp = functional_anova(f, result.space, pairs=pairs, method=method,
                               n_samples=n_samples, random_state=random_state)
    max_pairs = check_int(max_pairs, "max_pairs", 0)
    main = sorted(imp.main.items(), key=lambda kv: -kv[1])
    inter = sorted(imp.pairs.items(), key=lambda kv: -kv[1])[:max_pairs]
    labels = [n for n, _ in main] + [f"{a} × {b}" for (a, b), _ in inter]
    values = np.array([v for _, v in main] + [v for _, v in inter], dtype=float)
    colours = ["C0"] * len(main) + ["C1"] * len(inter)
    fig, ax, owned = target_axes(ax, 5.5, 0.9 + 0.32 * len(labels))
    y = np.arange(len(labels))[::-1]
    ax.barh(y, np.clip(values, 0.0, None), color=colours)
    shares = [imp.active.get(n, 1.0) for n, _ in main] + [1.0] * len(inter)
    for yy, v, p in zip(y, values, shares):
        where = f" (active in {100 * p:.0f}%)" if p < 1 else ""
        ax.text(max(v, 0.0), yy, f" {100 * v:.1f}%{where}", va="center", fontsize=8)
    ax.set_yticks(y, labels)
    ax.set_xlim(0.0, max(1e-9, float(np.clip(values, 0, None).max(initial=0.0))) * 1.2)
    ax.set_xlabel("fraction of the variance of the mean prediction")
    if inter:
        from matplotlib.patches import Patch

        ax.legend(handles=[Patch(color="C0", label="main effect"),
                           Patch(color="C1", label="pair interaction")], fontsize=8,
                  loc="lower right")
    ax.set_title(title or f"importance (functional ANOVA, {imp.method}, "
                          f"{imp.n_evaluations} evaluations)", fontsize=10)
    return finish(fig, path, owned)
