"""Hudi 1.x returns a timestamp-based key generator's partition fields as strings (v8 and v9)."""

from __future__ import annotations

import pytest

from pyhudi.reader.partition_values import string_partition_fields
from pyhudi.table.config import TableConfig


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({"hoodie.table.version": "9", "hoodie.table.keygenerator.type": "TIMESTAMP"}, ("big",)),
        (
            {
                "hoodie.table.version": "8",
                "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
            },
            ("big",),
        ),
        (
            {
                "hoodie.table.version": "6",
                "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
            },
            (),
        ),
        ({"hoodie.table.version": "9", "hoodie.table.keygenerator.type": "SIMPLE"}, ()),
    ],
)
def test_string_partition_fields(props: dict[str, str], expected: tuple[str, ...]) -> None:
    config = TableConfig({"hoodie.table.partition.fields": "big", **props})
    assert string_partition_fields(config) == expected
