"""Independent worker processes sharing one study through a storage (PostgreSQL or SQLite).

Each worker is its own process (as a job array on a cluster would start them): it opens the
study, then asks, evaluates and tells until the study holds ``target`` finished trials, waiting
while the trials left are pending in other workers (and taking over those whose owner died).
It prints one JSON line per ask and per tell, so that a driver can follow it, kill it in the
middle of an evaluation, and check afterwards that nothing was lost or done twice.

``python -m benchmarks.harness.shared_workers --storage URL --study NAME --target 200 --sleep 0.01``
runs one worker; :func:`start_worker` starts one from Python; :func:`journal_check` reads a
study back and counts what a driver needs to know.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import time

__all__ = ["objective", "conditional_space", "conditional_objective", "start_worker", "kill_in_first_evaluation", "journal_check",
           "make_storage", "main"]

SPACE = {"x": (-5.0, 10.0), "y": (0.0, 15.0)}


def objective(x: float, y: float) -> float:
    """Branin's function (minimum 0.397887)."""
    b, c = 5.1 / (4 * math.pi ** 2), 5 / math.pi
    return (y - b * x * x + c * x - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x) + 10


def conditional_space():
    """A conditional space for the workers: Branin in ``(x, y)``, or in ``(x, z)`` plus a
    penalty ``w`` (``z`` and ``w`` active only in that branch), with one forbidden pair."""
    from mfbo import Integer, Real, Space
    return Space({"branch": ["plain", "shifted"], "x": (-5.0, 10.0),
                  "y": Real(0.0, 15.0, when={"branch": "plain"}),
                  "z": Real(0.0, 15.0, step=0.5, when={"branch": "shifted"}),
                  "w": Integer(0, 3, when={"branch": "shifted"})},
                 forbidden=[{"branch": "shifted", "w": 3}])


def conditional_objective(branch: str, x: float, y: float | None = None,
                          z: float | None = None, w: int | None = None) -> float:
    """:func:`objective` of the branch's parameters, refusing any other parameter set."""
    if branch == "plain" and y is not None and z is None and w is None:
        return objective(x, y)
    if branch == "shifted" and y is None and z is not None and w in (0, 1, 2):
        return objective(x, z) + 0.5 * w + 1.0
    raise ValueError(f"parameters of another branch: {branch, x, y, z, w}")


def make_storage(url: str, heartbeat_interval: float | None = None,
                 grace_period: float | None = None):
    """The storage ``url`` names (a PostgreSQL URL or a SQLite path), with these heartbeat
    settings where given."""
    from mfbo.storage import as_storage
    return as_storage(url, **{k: v for k, v in (("heartbeat_interval", heartbeat_interval),
                                                ("grace_period", grace_period))
                              if v is not None})

def _say(**record) -> None:
    print(json.dumps({**record, "pid": os.getpid(), "time": time.time()}), flush=True)


def run_worker(url: str, study: str, target: int, sleep: float, seed: int,
               surrogate: str = "mondrian", heartbeat_interval: float | None = None,
               grace_period: float | None = None, slow_first: float = 0.0,
               conditional: bool = False) -> None:
    """Ask, evaluate (``sleep`` seconds each; ``slow_first`` for the first one) and tell until
    ``study`` holds ``target`` finished trials (in :func:`conditional_space` if
    ``conditional``)."""
    from mfbo import Optimizer
    storage = make_storage(url, heartbeat_interval, grace_period)
    space, f = (conditional_space(), conditional_objective) if conditional else (SPACE, objective)
    opt = Optimizer(space, surrogate=surrogate, storage=storage, study_name=study,
                    random_state=seed)
    _say(event="open", owner=opt.owner)
    first = True
    while True:
        opt.refresh()
        if opt.n_finished >= target:
            break
        trial = opt.ask(max_trials=target)
        if trial is None:  # the trials left are being evaluated elsewhere
            time.sleep(0.05)
            continue
        _say(event="ask", trial=trial.id)
        time.sleep(slow_first if first and slow_first else sleep)
        first = False
        told = opt.tell(trial, f(**trial.params))
        _say(event="tell", trial=told.id)
    waits = getattr(opt.storage, "lock_waits", None)
    _say(event="done", lock_waits=waits)
    opt.close()


def start_worker(url: str, study: str, target: int, sleep: float, seed: int,
                 surrogate: str = "mondrian", heartbeat_interval: float | None = None,
                 grace_period: float | None = None, slow_first: float = 0.0,
                 host: str | None = None, conditional: bool = False) -> subprocess.Popen:
    """A worker process (its stdout a pipe of JSON lines).  ``host`` sets the host name it
    records in its owner token (``MFBO_HOST``): other workers then know it only by its
    heartbeat, as one on another machine."""
    cmd = [sys.executable, "-m", "benchmarks.harness.shared_workers", "--storage", url,
           "--study", study, "--target", str(target), "--sleep", str(sleep), "--seed", str(seed),
           "--surrogate", surrogate, "--slow-first", str(slow_first)]
    if heartbeat_interval is not None:
        cmd += ["--heartbeat-interval", str(heartbeat_interval)]
    if grace_period is not None:
        cmd += ["--grace-period", str(grace_period)]
    if conditional:
        cmd += ["--conditional"]
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    if host is not None:
        env["MFBO_HOST"] = host
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)


def kill_in_first_evaluation(worker: subprocess.Popen) -> tuple[int, float]:
    """SIGKILL ``worker`` as soon as it has asked its first trial (in the middle of that
    evaluation); ``(trial id, time of the kill)``."""
    for line in worker.stdout:
        record = json.loads(line)
        if record["event"] == "ask":
            worker.send_signal(signal.SIGKILL)
            killed_at = time.time()
            worker.wait()
            return record["trial"], killed_at
    raise RuntimeError(f"the worker ended (exit code {worker.wait()}) before asking a trial")


def journal_check(storage, study: str) -> dict:
    """What the journal of ``study`` holds: trials, finished / pending ones, tells per trial,
    trials told twice, configurations asked twice, claims, and whether the event positions
    run 1, 2, ... without a gap."""
    events = storage.read(study, 0)
    positions = [e for e, _, _ in events]
    asks = [p for _, k, p in events if k == "ask"]
    tells: dict[int, int] = {}
    for _, kind, p in events:
        if kind == "tell":
            tells[p["id"]] = tells.get(p["id"], 0) + 1
    keys = [json.dumps(p["params"], sort_keys=True) for p in asks]
    return {"trials": len(asks), "finished": len(tells),
            "pending": len(asks) - len(tells),
            "told_twice": sorted(i for i, n in tells.items() if n > 1),
            "asked_twice": len(keys) - len(set(keys)),
            "claims": sum(1 for _, k, _ in events if k == "claim"),
            "contiguous": positions == list(range(positions[0], positions[0] + len(positions)))
            if positions else True}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.harness.shared_workers",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--storage", required=True, help="PostgreSQL URL or SQLite path")
    p.add_argument("--study", required=True)
    p.add_argument("--target", type=int, required=True, help="finished trials to reach")
    p.add_argument("--sleep", type=float, default=0.0, help="seconds per evaluation")
    p.add_argument("--slow-first", type=float, default=0.0,
                   help="seconds of the first evaluation (0: as the others)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--surrogate", default="mondrian")
    p.add_argument("--heartbeat-interval", type=float, default=None)
    p.add_argument("--grace-period", type=float, default=None)
    p.add_argument("--conditional", action="store_true",
                   help="the conditional space (conditional_space) instead of Branin's")
    a = p.parse_args(argv)
    run_worker(a.storage, a.study, a.target, a.sleep, a.seed, a.surrogate,
               a.heartbeat_interval, a.grace_period, a.slow_first, a.conditional)


if __name__ == "__main__":
    main()
