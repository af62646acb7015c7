"""The classification data of thesis chapter 3 (MAGIC gamma telescope, pen digits) load with
their registered checksums and shapes."""

import numpy as np

from benchmarks import data
from tests.support import requires_data


def test_classification_files_are_registered_with_public_sources():
    for name, shape in (("magic04.data", (19020, 11)), ("pendigits.tra", (7494, 17)),
                        ("pendigits.tes", (3498, 17))):
        entry = data.REGISTRY[name]
        assert len(entry.sha256) == 64 and entry.url.endswith(name)
        assert entry.shape == shape and entry.header is False


@requires_data("magic04.data")
def test_magic04_loads():
    X, y = data.load_magic04()
    assert X.shape == (19020, 10) and y.shape == (19020,)
    assert X.dtype == np.float64 and np.isfinite(X).all()
    labels, counts = np.unique(y, return_counts=True)
    assert list(labels) == ["g", "h"] and counts.tolist() == [12332, 6688]


@requires_data("pendigits.tra")
@requires_data("pendigits.tes")
def test_pendigits_loads_the_predefined_split():
    X_train, y_train, X_test, y_test = data.load_pendigits()
    assert X_train.shape == (7494, 16) and X_test.shape == (3498, 16)
    assert y_train.shape == (7494,) and y_test.shape == (3498,)
    for X, y in ((X_train, y_train), (X_test, y_test)):
        assert X.min() == 0 and X.max() == 100
        assert sorted(np.unique(y)) == list(range(10))
