"""The Ordinal dimension: values in a meaningful order, encoded like a categorical, searched
as an ordered coordinate."""

import numpy as np
import pytest

import mfbo
from mfbo import Categorical, Ordinal, Space
from mfbo.storage import SQLiteStorage


def test_encoding_values_and_json():
    s = Space({"size": Ordinal(["S", "M", "L"]), "c": Categorical(["S", "M", "L"])})
    assert list(s.levels) == [3, -3]  # ordered vs unordered, same encoding
    U = s.to_unit([{"size": "L", "c": "L"}])
    assert np.allclose(U, [[5 / 6, 5 / 6]])
    assert s.from_unit(U) == [{"size": "L", "c": "L"}]
    assert Space.from_json(s.to_json()) == s
    assert s.dimensions["size"] != Categorical(["S", "M", "L"])
    assert repr(s.dimensions["size"]) == "Ordinal(['S', 'M', 'L'])"
    with pytest.raises(ValueError, match="'size'"):
        s.validate({"size": "XL", "c": "S"})
    with pytest.raises(ValueError, match="distinct"):
        Ordinal([1, 1])


def test_optimizer_over_an_ordinal_and_resume(tmp_path):
    space = {"x": (0.0, 1.0), "size": Ordinal([1, 2, 4, 8, 16])}
    db = str(tmp_path / "s.db")
    r = mfbo.minimize(lambda x, size: x + abs(size - 4), space, n_calls=15, random_state=0,
                      progress_bar=False, storage=db)
    assert all(t.params["size"] in (1, 2, 4, 8, 16) for t in r.trials)
    again = mfbo.Optimizer(space, storage=SQLiteStorage(db))  # the stored space matches
    assert again.n_finished == 15
