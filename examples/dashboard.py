"""Watch a study live: optuna-dashboard over a read-only view of an mfbo journal.

A study of a small learning curve runs in a background thread (each trial reports a value per
epoch, and a pruner stops the poor ones) while the dashboard serves it; what the dashboard's
API shows is printed as the study grows.  The same, from a shell, while any script writes
``study.db``:

    mfbo dashboard study.db            # then open http://127.0.0.1:8080/dashboard
                                       # and http://127.0.0.1:8080/mfbo (mfbo's figures)

A study's page asks for new trials every 3 s at most (``--reload-interval SECONDS`` changes it;
optuna-dashboard alone waits 10 s on a study of 500 trials or more).

Run: ``python examples/dashboard.py`` (a few seconds; ``--serve`` keeps the dashboard open
at the address it prints until Ctrl-C).  Needs ``pip install "mfbo[dashboard]"``.
"""

import argparse
import json
import math
import threading
import time
import urllib.request
from wsgiref.simple_server import WSGIRequestHandler, make_server

import mfbo
from mfbo.integrations.dashboard import create_app, open_view

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--serve", action="store_true", help="keep serving until Ctrl-C")
args = parser.parse_args()


def curve(lr, width, trial):
    """A learning curve: the loss after each of 8 epochs."""
    loss = 0.0
    for epoch in range(8):
        loss = (math.log10(lr) + 2) ** 2 + 1 / (1 + epoch * width / 8)
        trial.report(loss, step=epoch)
        if trial.should_prune():
            raise mfbo.TrialPruned(f"stopped after epoch {epoch}")
        time.sleep(0.005)
    return loss


space = {"lr": mfbo.Real(1e-4, 1.0, log=True), "width": mfbo.Integer(1, 64)}
mfbo.minimize(curve, space, n_calls=8, storage="study.db", random_state=0, progress_bar=False)
writer = threading.Thread(target=mfbo.minimize, args=(curve, space), kwargs=dict(
    n_calls=40, storage="study.db", random_state=1, progress_bar=False,
    pruner=mfbo.MedianPruner(n_startup_trials=5)))
writer.start()


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


app = create_app(open_view("study.db"))
server = make_server("127.0.0.1", 0, app, handler_class=Quiet)
serving = threading.Thread(target=server.serve_forever, daemon=True)
serving.start()
url = f"http://127.0.0.1:{server.server_port}"
while True:
    with urllib.request.urlopen(f"{url}/api/studies/0") as response:
        detail = json.load(response)
    states = [t["state"] for t in detail["trials"]]
    best = detail["best_trials"][0]["values"][0] if detail["best_trials"] else None
    print(f"the dashboard shows {len(states)} trials ({states.count('Pruned')} pruned), "
          f"best value {best}")
    if not writer.is_alive():
        break
    time.sleep(1.0)
print(f"the dashboard: {url}/dashboard   mfbo's figures: {url}/mfbo")
if args.serve:
    serving.join()
