"""Record keys computed in Arrow (`format("hudi")` tasks, bootstrap): a missing key is an error."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pyhudi.exceptions import InvalidRecordError
from pyhudi.keygen.arrow import record_keys
from pyhudi.keygen.spec import spec_from_options

SIMPLE = {"hoodie.datasource.write.recordkey.field": "id"}
COMPLEX = {"hoodie.datasource.write.recordkey.field": "id,name"}


@pytest.mark.parametrize("bad", [None, ""])
def test_a_null_or_empty_simple_key_is_an_error(bad):
    """A null key used to pass: `null or true` is null in Arrow's plain `or_`, which `any` skips."""
    table = pa.table({"id": ["a", bad, "c"]})
    with pytest.raises(InvalidRecordError, match="'id' is null or empty"):
        record_keys(table, spec_from_options(SIMPLE))


def test_keys_are_the_values_as_strings():
    table = pa.table({"id": [1, 2]})
    assert record_keys(table, spec_from_options(SIMPLE)).to_pylist() == ["1", "2"]


def test_a_complex_key_fails_only_when_every_part_is_missing():
    spec = spec_from_options(COMPLEX)
    table = pa.table({"id": ["a", None], "name": [None, "n"]})
    assert record_keys(table, spec).to_pylist() == ["id:a,name:__null__", "id:__null__,name:n"]
    with pytest.raises(InvalidRecordError, match="are null or empty"):
        record_keys(pa.table({"id": [None], "name": [""]}), spec)
