"""Threads sharing one optimizer, and a study that survives a worker process that dies.

1. Four threads run the ask / evaluate / tell loop on one ``Optimizer`` (its methods take
   its lock; the evaluations run in parallel).
2. ``minimize(n_workers=2)`` with an objective whose worker process dies (``os._exit``) for
   one region of the space: that trial is a failed trial, the pool is rebuilt, and the study
   ends with every call made.

Run: ``python examples/threads_and_crashes.py``
"""

import os
import threading
import time

import mfbo

SPACE = {"x": (-5.0, 10.0), "y": (0.0, 15.0)}


def slow_quadratic(x, y):
    time.sleep(0.01)  # the evaluation, outside the optimizer's lock
    return (x - 1) ** 2 + (y - 2) ** 2


def dies_sometimes(x, y):
    if x > 9.0:  # a crash no try/except can catch: the worker process is gone
        os._exit(1)
    return (x - 1) ** 2 + (y - 2) ** 2


def threads():
    opt = mfbo.Optimizer(SPACE, random_state=0, n_initial=8)

    def work():
        for _ in range(10):
            trial = opt.ask()
            opt.tell(trial, slow_quadratic(**trial.params))

    pool = [threading.Thread(target=work) for _ in range(4)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    best = opt.best_trial
    assert opt.n_finished == 40 and not opt.pending
    print(f"4 threads, one optimizer: {opt.n_finished} trials, best {best.value:.3f} at "
          f"x={best.params['x']:.2f}, y={best.params['y']:.2f}")


def crashes():
    result = mfbo.minimize(dies_sometimes, SPACE, n_calls=12, n_workers=2, random_state=0,
                           surrogate="random", progress_bar=False,
                           initial_points=[{"x": 9.5, "y": 1.0}])
    failed = [t for t in result.trials if t.state == "failed"]
    assert len(result.trials) == 12 and [t.params["x"] for t in failed] == [9.5]
    print(f"minimize with a worker that dies: {len(result.trials)} trials, {len(failed)} "
          f"failed: {failed[0].error if failed else '-'}")


if __name__ == "__main__":
    threads()
    crashes()
