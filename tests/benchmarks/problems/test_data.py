"""Data loaders: lookup order, clear errors, checksum verification (no network needed); the
classification data of thesis chapter 3 (MAGIC gamma telescope, pen digits) load with their
registered checksums and shapes."""

import dataclasses
import hashlib
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from benchmarks.problems import data
from benchmarks.problems.problems import PROBLEMS
from tests.support import requires_data


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No MFBO_DATA_DIR, an empty user cache."""
    monkeypatch.delenv(data.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def _register(monkeypatch, name, content: bytes, url=None, shape=None):
    """Register a toy data file whose SHA-256 is that of ``content``."""
    digest = hashlib.sha256(content).hexdigest()
    monkeypatch.setitem(data.REGISTRY, name, data.RemoteFile(digest, url, shape))
    return digest


def test_lookup_order_argument_then_env_then_cache(isolated, monkeypatch):
    name, content = "toy.csv", b"a,b\n1,2\n"
    _register(monkeypatch, name, content)
    arg, env, cache = isolated / "arg", isolated / "env", data.cache_dir()
    for d in (arg, env, cache):
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(content)
    monkeypatch.setenv(data.ENV_VAR, str(env))
    assert data.fetch_file(name, data_home=arg) == arg / name
    assert data.fetch_file(name) == env / name
    monkeypatch.delenv(data.ENV_VAR)
    assert data.fetch_file(name) == cache / name


def test_missing_file_error_says_where_to_put_it(isolated):
    with pytest.raises(FileNotFoundError) as err:
        data.fetch_file("svm_on_grid.csv")
    assert data.ENV_VAR in str(err.value) and str(data.cache_dir()) in str(err.value)
    with pytest.raises(FileNotFoundError, match="download=False"):
        data.fetch_file("cpu_act.csv", download=False)


def test_download_is_verified(isolated, monkeypatch):
    good = isolated / "good.csv"
    good.write_text("1,2\n3,4\n")
    digest = hashlib.sha256(good.read_bytes()).hexdigest()
    monkeypatch.setitem(data.REGISTRY, "toy.csv", data.RemoteFile(digest, good.as_uri()))
    assert data.fetch_file("toy.csv").read_bytes() == good.read_bytes()
    monkeypatch.setitem(data.REGISTRY, "bad.csv", data.RemoteFile("0" * 64, good.as_uri()))
    with pytest.raises(data.ChecksumError):
        data.fetch_file("bad.csv")
    assert not (data.cache_dir() / "bad.csv").exists()


def test_cpu_act_loads_when_available():
    try:
        X, y = data.load_cpu_act()
    except FileNotFoundError:
        pytest.skip("cpu_act.csv not found: set MFBO_DATA_DIR (CI uses ../shared/data)")
    assert X.shape == (8192, 21) and y.shape == (8192,)


@pytest.fixture
def local_copy(tmp_path, monkeypatch):
    """``copy(name)``: a copy of the real data file in a fresh directory, skipping the test
    when ``MFBO_DATA_DIR`` does not hold it; afterwards no MFBO_DATA_DIR, an empty cache."""
    shared = os.environ.get(data.ENV_VAR, "")
    monkeypatch.delenv(data.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    target = tmp_path / "data"
    target.mkdir()

    def copy(name):
        source = os.path.join(shared, name)
        if not shared or not os.path.isfile(source):
            pytest.skip(f"{name} not found: set MFBO_DATA_DIR to a directory holding it "
                        "(CI uses ../shared/data)")
        return shutil.copyfile(source, target / name)

    return copy


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_registered_hashes_and_shapes_match_the_shared_files():
    shared = os.environ.get(data.ENV_VAR, "")
    found = [n for n in data.REGISTRY if shared and os.path.isfile(os.path.join(shared, n))]
    if not found:
        pytest.skip("no data file found: set MFBO_DATA_DIR (CI uses ../shared/data)")
    for name in found:
        path = os.path.join(shared, name)
        assert data.verify_file(path, name) == Path(path)
        assert data.read_table(name, shared).shape == data.REGISTRY[name].shape


def test_truncated_cpu_act_is_rejected_naming_file_and_hashes(local_copy):
    path = local_copy("cpu_act.csv")
    content = path.read_bytes()
    path.write_bytes(content[:len(content) // 2])  # loaded as (4095, 21) before
    with pytest.raises(data.ChecksumError) as err:
        data.load_cpu_act(data_home=path.parent)
    message = str(err.value)
    assert str(path) in message and _sha(path) in message
    assert data.REGISTRY["cpu_act.csv"].sha256 in message and "intact copy" in message


def test_random_file_named_cpu_act_is_rejected(isolated):
    rows = np.random.default_rng(0).random((10, 22))
    path = isolated / "cpu_act.csv"
    path.write_text(",".join(str(i) for i in range(1, 23)) + "\n"
                    + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    with pytest.raises(data.ChecksumError, match="cpu_act.csv"):
        data.load_cpu_act(data_home=isolated)  # loaded as (10, 21) before


def test_edited_lda_table_is_rejected(local_copy):
    path = local_copy("lda_on_grid.csv")
    text = path.read_text()
    assert "1266.167382" in text
    path.write_text(text.replace("1266.167382", "1266.167383"))  # same size, one digit
    fresh = dataclasses.replace(PROBLEMS["lda-grid"], _table=None)
    with pytest.raises(data.ChecksumError, match="lda_on_grid.csv"):
        fresh.load(data_home=path.parent)
    assert fresh._table is None


def test_intact_copies_load(local_copy):
    path = local_copy("cpu_act.csv")
    X, y = data.load_cpu_act(data_home=path.parent)
    assert X.shape == (8192, 21) and y.shape == (8192,)
    lda = local_copy("lda_on_grid.csv")
    fresh = dataclasses.replace(PROBLEMS["lda-grid"], _table=None)
    assert fresh.load(data_home=lda.parent).values.min() == 1266.167382


def test_a_file_is_hashed_once_while_unchanged(isolated, monkeypatch):
    content = b"a,b\n1,2\n"
    _register(monkeypatch, "toy.csv", content)
    path = isolated / "toy.csv"
    path.write_bytes(content)
    calls = []
    real = data._sha256
    monkeypatch.setattr(data, "_sha256", lambda p: calls.append(p) or real(p))
    for _ in range(3):
        assert data.fetch_file("toy.csv", data_home=isolated) == path
    assert len(calls) == 1
    # an edit of the same size is seen through the changed modification time
    stat = path.stat()
    path.write_bytes(b"a,b\n1,3\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    with pytest.raises(data.ChecksumError, match="toy.csv"):
        data.fetch_file("toy.csv", data_home=isolated)
    assert len(calls) == 2


def test_damaged_cached_download_is_downloaded_again(isolated, monkeypatch):
    source = isolated / "source.csv"
    source.write_bytes(b"a,b\n1,2\n")
    digest = _register(monkeypatch, "toy.csv", source.read_bytes(), url=source.as_uri())
    cached = data.cache_dir() / "toy.csv"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"a,b\n1,")  # a download cut off
    with pytest.raises(data.ChecksumError, match="download=True"):
        data.fetch_file("toy.csv", download=False)
    assert data.fetch_file("toy.csv") == cached and _sha(cached) == digest
    # the source itself is damaged: the error says both, and no bad copy is used
    cached.write_bytes(b"a,b\n1,")
    source.write_bytes(b"a,b\n9,9\n")
    with pytest.raises(data.ChecksumError) as err:
        data.fetch_file("toy.csv")
    assert str(cached) in str(err.value) and "afresh failed" in str(err.value)
    assert cached.read_bytes() == b"a,b\n1,"


def test_table_of_the_wrong_shape_is_rejected(isolated, monkeypatch):
    content = b"a,b\n1,2\n3,4\n"
    _register(monkeypatch, "toy.csv", content, shape=(3, 2))
    (isolated / "toy.csv").write_bytes(content)
    with pytest.raises(ValueError, match="2 rows x 2 columns; 'toy.csv' should have 3 x 2"):
        data.read_table("toy.csv", isolated)
    _register(monkeypatch, "toy.csv", content, shape=(2, 2))
    assert data.read_table("toy.csv", isolated).shape == (2, 2)



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
