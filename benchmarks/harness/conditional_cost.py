"""What a conditional space costs per ask: the proposal time of a conditional space against a
flat space of the same active dimension, in the same run.

The conditional space chooses one of ``branches`` branches, each with ``per_branch`` real
parameters of its own (active only under it), plus one shared real parameter; the flat space
has the branch choice, the shared parameter and ``per_branch`` reals, so every configuration of
either has ``per_branch + 2`` active parameters.  The third, "flattened", is the conditional
space without its conditions (every parameter always active), as a user without conditional
spaces writes it: the same dimension as the conditional one.  Both minimise the same kind of function (a
quadratic per branch, with a different optimum in each), with the default ``mondrian``
recipe and an initial design of :data:`N_INITIAL` points for both, and the time of every ask
and tell after the initial design is taken.

``python -m benchmarks.harness.conditional_cost [--n 120] [--seeds 3]`` prints the mean and
median ask and tell times and the ratios of the conditional space's to the others' (the mean is
the cost of a run; the median depends on the mix of cheap and dear proposals).
"""

from __future__ import annotations

import argparse

import numpy as np

from .timing import clock

__all__ = ["spaces", "measure", "main"]

#: the initial design of both spaces (the default, 10 per dimension, would differ)
N_INITIAL = 20


def spaces(branches: int = 4, per_branch: int = 5):
    """``(conditional, flat, flattened)``: the spaces compared (see the module's docstring)."""
    from mfbo import Real, Space

    names = [f"b{i}" for i in range(branches)]
    cond = {"branch": names, "shared": Real(0.0, 1.0)}
    for b in names:
        for j in range(per_branch):
            cond[f"{b}_x{j}"] = Real(0.0, 1.0, when={"branch": b})
    flat = {"branch": names, "shared": Real(0.0, 1.0)}
    flat.update({f"x{j}": Real(0.0, 1.0) for j in range(per_branch)})
    flattened = {n: Real(0.0, 1.0) if n != "branch" else d for n, d in cond.items()}
    return Space(cond), Space(flat), Space(flattened)


def _loss(params: dict) -> float:
    b = int(params["branch"][1:])
    # the branch's own parameters (the flattened space passes the other branches' too)
    xs = [v for k, v in params.items() if k.startswith((params["branch"] + "_", "x"))]
    centre = (b + 1) / (len(xs) + 2)
    return float(b * 0.1 + (params["shared"] - 0.5) ** 2 + sum((x - centre) ** 2 for x in xs))


def measure(space, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(ask seconds, tell seconds)`` of the trials after the initial design of one run of
    ``n`` trials."""
    from mfbo import Optimizer

    opt = Optimizer(space, random_state=seed, n_initial=N_INITIAL)
    n_initial = opt.n_initial
    asks, tells = [], []
    for i in range(n):
        t0 = clock()
        trial = opt.ask()
        t1 = clock()
        opt.tell(trial, _loss(trial.params))
        t2 = clock()
        if i >= n_initial:
            asks.append(t1 - t0)
            tells.append(t2 - t1)
    return np.array(asks), np.array(tells)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.harness.conditional_cost",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=120, help="trials per run")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--branches", type=int, default=4)
    p.add_argument("--per-branch", type=int, default=5)
    a = p.parse_args(argv)
    cond, flat, flattened = spaces(a.branches, a.per_branch)
    measure(flat, 12, 999)  # compile and import before anything is timed
    named = {"flat": flat, "flattened": flattened, "conditional": cond}
    runs = {name: [] for name in named}
    for seed in range(a.seeds):  # interleaved: a change of the machine's load hits all alike
        for name, space in named.items():
            runs[name].append(measure(space, a.n, seed))
    out = {name: tuple(f(np.concatenate([r[k] for r in rs]))
                       for k in (0, 1) for f in (np.mean, np.median))
           for name, rs in runs.items()}
    print(f"{a.seeds} seeds x {a.n} trials; the conditional and flattened spaces have "
          f"{len(cond)} dimensions, the flat one {len(flat)}; the conditional and flat ones "
          f"{a.per_branch + 2} active per configuration")
    print("| space | mean ask (ms) | median ask (ms) | mean tell (ms) | median tell (ms) |")
    print("|---|---|---|---|---|")
    for name, times in out.items():
        print(f"| {name} | " + " | ".join(f"{1e3 * t:.1f}" for t in times) + " |")
    for other in ("flat", "flattened"):
        ratio = [out["conditional"][k] / out[other][k] for k in range(4)]
        print(f"ratio conditional / {other}: ask {ratio[0]:.2f} (mean), {ratio[1]:.2f} "
              f"(median); tell {ratio[2]:.2f} (mean), {ratio[3]:.2f} (median)")


if __name__ == "__main__":
    main()
