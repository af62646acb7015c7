"""One study, several independent worker processes (as a cluster job array would start them).

Each worker opens the same storage and study and runs ``mfbo.minimize`` on it: proposals are
serialised by the storage, so no two workers evaluate the same trial, and a worker that dies
has its pending trial handed to another after its heartbeat stops.  By default the storage is
a SQLite file (one host); pass a PostgreSQL URL to share the study across machines:

    python examples/shared_study.py --storage postgresql://user@dbhost/mfbo   # on every host

(``pip install "mfbo[rdb]"``).
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile

import mfbo

SPACE = {"x": (-5.0, 10.0), "y": (0.0, 15.0)}


def branin(x, y):
    b, c = 5.1 / (4 * math.pi ** 2), 5 / math.pi
    return (y - b * x * x + c * x - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x) + 10


def worker(storage, seed, n_calls):
    # n_calls is the size of the whole study: each worker stops when the study holds it
    mfbo.minimize(branin, SPACE, n_calls=n_calls, storage=storage, study_name="branin",
                  random_state=seed, progress_bar=False)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--storage", help="a SQLite path or a postgresql:// URL (default: a "
                                     "temporary SQLite file)")
    p.add_argument("--workers", type=int, default=3)
    p.add_argument("--n-calls", type=int, default=18)
    p.add_argument("--worker-seed", type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker_seed is not None:  # a worker process
        worker(a.storage, a.worker_seed, a.n_calls)
        sys.exit(0)
    storage = a.storage or os.path.join(tempfile.mkdtemp(), "study.db")
    procs = [subprocess.Popen([sys.executable, __file__, "--storage", storage, "--n-calls",
                               str(a.n_calls), "--worker-seed", str(seed)])
             for seed in range(a.workers)]
    assert all(proc.wait() == 0 for proc in procs)
    study = mfbo.Study.open(storage, "branin")
    workers = {t.owner.split(":")[1] for t in study.trials}
    print(f"{study.n_finished} trials finished by {len(workers)} worker processes; best "
          f"{study.best.value:.4f} at {study.best.params}")
