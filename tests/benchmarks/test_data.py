"""Data loaders: lookup order, clear errors, checksum verification (no network needed)."""

import hashlib

import pytest

from benchmarks import data


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No MFBO_DATA_DIR, an empty user cache."""
    monkeypatch.delenv(data.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def test_lookup_order_argument_then_env_then_cache(isolated, monkeypatch):
    name = "lda_on_grid.csv"
    arg, env, cache = isolated / "arg", isolated / "env", data.cache_dir()
    for d in (arg, env, cache):
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(d.name)
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
