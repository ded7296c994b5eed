"""Partition columns a read returns as strings: Hudi 1.x (table versions 8 and 9) types the
partition fields of a timestamp-based key generator as `string` and returns the stored value cast
to a string (`11000033` for the long 11000033), not the formatted date of the partition path.

Table version 6 keeps the stored type: Hudi 0.15, its reference, is not consistent there (its
snapshot returns the partition path, other queries fail), so pyhudi returns the file's column.
"""

from __future__ import annotations

from pyhudi.table.config import TableConfig

_TIMESTAMP_KEYGENS = ("TIMESTAMP", "TimestampBasedKeyGenerator", "TimestampBasedAvroKeyGenerator")


def string_partition_fields(config: TableConfig) -> tuple[str, ...]:
    """The partition fields a read casts to string (none before table version 8)."""
    keygen = config.key_generator_class or ""
    if config.version < 8 or not keygen.endswith(_TIMESTAMP_KEYGENS):
        return ()
    return config.partition_fields
