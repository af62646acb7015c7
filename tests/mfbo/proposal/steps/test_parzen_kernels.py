"""The compiled truncated-normal draw against numpy's form of it: the same numbers from the same
generator, and the generator left at the same place, so a Parzen step proposes the same points
whichever it takes."""

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mfbo.proposal.steps import parzen
from mfbo.proposal.steps._parzen_kernels import truncated_normal_into
from mfbo.proposal.steps.parzen import _REDRAWS, ParzenDensity, truncated_normal


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(0, 300),
       prior_share=st.floats(0.0, 1.0), redraws=st.sampled_from([0, 1, 3, _REDRAWS]))
def test_the_compiled_draws_are_numpy_s_and_leave_the_generator_where_numpy_does(
        seed, n, prior_share, redraws):
    setup = np.random.default_rng(seed)
    prior = setup.random(n) < prior_share
    mu = np.where(prior, 0.5, setup.uniform(-0.2, 1.2, n))  # (some centres outside)
    sd = np.where(prior, 1.0, setup.uniform(1e-3, 0.5, n))
    ours, theirs = np.random.default_rng(seed + 1), np.random.default_rng(seed + 1)
    out = np.full(n, np.nan)
    truncated_normal_into(mu, sd, ours, out, redraws)
    assert np.array_equal(out, truncated_normal(mu, sd, theirs, redraws))
    assert ours.random() == theirs.random()
    assert np.all((out >= 0.0) & (out <= 1.0))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), m=st.integers(1, 30), n=st.integers(1, 200),
       levels=st.lists(st.sampled_from([0, 0, 3, 5, -2, -4]), min_size=1, max_size=12),
       inactive=st.floats(0.0, 0.9))
def test_a_density_s_sample_is_the_numpy_draw(seed, m, n, levels, inactive):
    """The sample with the compiled draw equals the sample with numpy's in its place."""
    setup = np.random.default_rng(seed)
    levels = np.array(levels)
    X = setup.random((m, levels.size))
    X[setup.random(X.shape) < inactive] = -1.0  # (inactive coordinates: outside [0, 1])
    density = ParzenDensity(X, levels)
    ours, theirs = np.random.default_rng(seed + 1), np.random.default_rng(seed + 1)
    compiled = density.sample(n, ours)
    with pytest.MonkeyPatch.context() as patch:  # (as while a second process compiles it)
        patch.setattr(parzen, "_truncated_normal_draw", lambda: parzen._numpy_draw)
        assert np.array_equal(compiled, density.sample(n, theirs))
    assert ours.random() == theirs.random()


_FRESH = """
    import json
    import numpy as np
    from surrogates._core import compile_ahead
    from mfbo.proposal.steps import parzen
    from mfbo.proposal.steps._parzen_kernels import truncated_normal_into as kernel
    density = parzen.ParzenDensity(np.random.default_rng(0).random((6, 4)),
                                   np.array([0, 0, -3, 2]))
    rng = np.random.default_rng(1)
    used, out = [], []
    for i in range(40):
        if i == 30:
            compile_ahead.ready(kernel)
        used.append(parzen._truncated_normal_draw() is kernel)
        out.append(density.sample(50, rng).tolist())
    print(json.dumps({"used": used, "out": out,
                      "loaded": sum(kernel.stats.cache_hits.values()),
                      "compiled": sum(kernel.stats.cache_misses.values())}))
    """


def test_a_fresh_install_draws_with_numpy_until_the_second_process_has_compiled(
        python_run, tmp_path):
    runs = {}
    for ahead in ("1", "0"):
        cache = tmp_path / f"cache{ahead}"
        cache.mkdir()
        proc = python_run(_FRESH, 600, NUMBA_CACHE_DIR=str(cache),
                          SURROGATES_COMPILE_AHEAD=ahead)
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs[ahead] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert runs["1"]["out"] == runs["0"]["out"]  # the same numbers either way
    assert all(runs["0"]["used"]) and runs["0"]["compiled"] == 1  # compiled here, at once
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if (cores or 1) < 2:
        pytest.skip("one core: nothing is compiled ahead (checked: the same numbers)")
    used = runs["1"]["used"]
    assert not used[0] and all(used[30:])  # numpy's first, the compiled draw once it is there
    assert used == sorted(used)  # (never back to numpy's)
    assert runs["1"]["loaded"] == 1 and runs["1"]["compiled"] == 0
