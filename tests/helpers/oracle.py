"""The independent reader `hudi` (hudi-rs) as the oracle, and value normalisation for comparisons."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa

META = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)


def hudi_rs_table(
    path: str,
    *,
    as_of: str | None = None,
    start: str | None = None,
    end: str | None = None,
    read_optimized: bool = False,
) -> pa.Table:
    import hudi

    table = hudi.HudiTable(str(path))
    options = hudi.HudiReadOptions()
    if read_optimized:
        options = options.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    if start is not None:
        options = options.with_query_type(hudi.HudiQueryType.Incremental).with_start_timestamp(
            start
        )
        if end is not None:
            options = options.with_end_timestamp(end)
    elif as_of is not None:
        options = options.with_as_of_timestamp(as_of)
    batches = table.read(options)
    if not batches:
        return pa.table({})
    return pa.Table.from_batches(batches)


def normalize(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc).isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value.normalize()) if value == value.to_integral() else str(value)
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [normalize(v) for v in value]
        if items and all(
            isinstance(i, tuple | list) and len(i) == 2 and isinstance(i[0], str) for i in value
        ):
            return dict(sorted((k, v) for k, v in items))  # map entries
        return items
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return value


def rows(
    table: pa.Table, *, key: str = "_hoodie_record_key", columns: list[str] | None = None
) -> list[dict]:
    data = table.to_pylist()
    out = []
    for row in data:
        if columns is not None:
            row = {c: row.get(c) for c in columns}
        out.append({k: normalize(v) for k, v in row.items()})
    sort_key = key if (out and key in out[0]) else None
    return sorted(out, key=lambda r: str(r.get(sort_key)) if sort_key else str(sorted(r.items())))


def spark_arrow(df) -> pa.Table:  # type: ignore[no-untyped-def]
    return df.toArrow()


def assert_same_rows(ours: pa.Table, theirs: pa.Table, key: str = "_hoodie_record_key") -> None:
    """The same columns and rows (sorted by `key`, or `id` for tables without it) as the oracle's
    answer; an oracle answer without columns (an empty table) means no rows."""
    if theirs.num_columns == 0:
        assert ours.num_rows == 0
        return
    sort_key = key if key in theirs.column_names else "id"
    assert ours.column_names == theirs.column_names
    assert rows(ours, key=sort_key) == rows(theirs, key=sort_key)
