"""Writing one base parquet file in a task: marker first, meta columns, bloom filter, Hudi footer.

Runs inside Spark tasks (pyarrow only), described by a `WriteTaskSpec` (`pyhudi.file_group.spec`).
"""

from __future__ import annotations

import posixpath
import time
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pyhudi.codec.bloom import BloomFilter, footer_metadata, new_bloom_filter
from pyhudi.codec.file_names import base_file_name
from pyhudi.codec.schema import (
    COMMIT_SEQNO,
    COMMIT_TIME,
    FILE_NAME,
    META_FIELDS,
    PARTITION_PATH,
    RECORD_KEY,
)
from pyhudi.file_group.column_ranges import footer_column_ranges
from pyhudi.file_group.index_results import COLUMN_RANGES, encode_column_ranges, key_changes
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.model.enums import IOType
from pyhudi.table.faults import fault_point


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Select/cast `table` to `schema`; missing columns become nulls (schema evolution)."""
    columns = []
    for target in schema:
        if target.name in table.column_names:
            column = table.column(target.name)
            columns.append(column if column.type == target.type else column.cast(target.type))
        else:
            columns.append(pa.nulls(table.num_rows, target.type))
    return pa.Table.from_arrays(columns, schema=schema)


class BaseFileWriter:
    """Writes one base file `<fileId>_<token>_<instant>.parquet`; returns its stats row on close."""

    def __init__(
        self,
        spec: WriteTaskSpec,
        partition: str,
        file_id: str,
        write_token: str,
        io_type: IOType,
        *,
        task_partition_id: int,
        prev_commit: str = "null",
    ) -> None:
        self.spec, self.partition, self.file_id, self.io_type = spec, partition, file_id, io_type
        self.prev_commit, self.task_partition_id = prev_commit, task_partition_id
        self.file_name = base_file_name(file_id, write_token, spec.instant_time)
        self.path = posixpath.join(spec.partition_dir(partition), self.file_name)
        self.counts = {"num_writes": 0, "num_inserts": 0, "num_updates": 0, "num_deletes": 0}
        self._bloom: BloomFilter | None = None
        self._keys_in_bloom = 0  # leading keys `continue_bloom` said the filter already holds
        self._min_key: str | None = None
        self._max_key: str | None = None
        self._writer: pq.ParquetWriter | None = None
        self._sink: Any = None
        self._started = time.monotonic()
        #: The record keys written (`spec.collect_keys`), and those of the slice this file replaces.
        self._written_keys: list[pa.ChunkedArray] = []
        self.previous_keys: pa.ChunkedArray | None = None
        spec.ensure_partition_metadata(partition)
        spec.create_marker(partition, self.file_name, io_type)
        if spec.bloom.enabled and spec.populate_meta_fields:
            b = spec.bloom
            self._bloom = new_bloom_filter(b.num_entries, b.fpp, b.type_code, b.max_entries)

    def continue_bloom(self, previous: BloomFilter, keys_in_it: int) -> None:
        """Go on from `previous`, the filter of the first `keys_in_it` keys this file gets (a merge
        that keeps an old file's rows in their order): those keys are not hashed again."""
        if self._bloom is not None and self.counts["num_writes"] == 0:
            self._bloom, self._keys_in_bloom = previous, keys_in_it

    # ---- rows ----------------------------------------------------------------------------------
    def write_new(self, records: pa.Table) -> None:
        """Records of this instant: commit time and sequence numbers are assigned here."""
        n = records.num_rows
        if n == 0:
            return
        start = self.counts["num_writes"]
        meta = {
            COMMIT_TIME: pa.repeat(self.spec.instant_time, n),
            COMMIT_SEQNO: _seqnos(f"{self.spec.instant_time}_{self.task_partition_id}_", start, n),
        }
        self._write(records, meta)

    def write_existing(self, records: pa.Table) -> None:
        """Records carried over from an older file: they keep their commit time and sequence number."""
        if records.num_rows:
            self._write(records, {})

    def bytes_written(self) -> int:
        return int(self._sink.tell()) if self._sink is not None else 0

    def _write(self, records: pa.Table, meta: dict[str, pa.Array]) -> None:
        n = records.num_rows
        meta[FILE_NAME] = pa.repeat(self.file_name, n)
        if not self.spec.populate_meta_fields:
            for name in (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH):
                meta[name] = pa.nulls(n, pa.string())
        table = records
        for name, values in meta.items():
            column = values if isinstance(values, pa.Array) else pa.array(values, pa.string())
            if name in table.column_names:
                table = table.set_column(
                    table.column_names.index(name), name, column.cast(pa.string())
                )
            else:
                table = table.append_column(name, column.cast(pa.string()))
        table = conform(table, self.spec.file_schema)
        if self.spec.populate_meta_fields:
            self._track_keys(table.column(RECORD_KEY))
            if self.spec.collect_keys:
                self._written_keys.append(table.column(RECORD_KEY))
        self._open(table).write_table(table, row_group_size=max(n, 1))
        self.counts["num_writes"] += n

    def _track_keys(self, keys: pa.ChunkedArray) -> None:
        if self._bloom is not None:
            skip = min(self._keys_in_bloom, len(keys))
            self._keys_in_bloom -= skip
            if skip < len(keys):
                self._bloom.add_keys(keys.slice(skip))
        low, high = pc.min_max(keys).values()
        low, high = low.as_py(), high.as_py()
        if low is not None:
            self._min_key = low if self._min_key is None else min(self._min_key, low)
            self._max_key = high if self._max_key is None else max(self._max_key, high)

    def _open(self, first: pa.Table | None = None) -> pq.ParquetWriter:
        """The parquet writer, opened on the first rows (`first`: they pick the dictionary columns)."""
        if self._writer is None:
            sizing = self.spec.sizing
            self._sink = self.spec.storage.open_output(self.path)
            self._writer = pq.ParquetWriter(
                self._sink,
                self.spec.file_schema,
                compression=sizing.compression,
                data_page_size=sizing.page_size_bytes,
                use_dictionary=dictionary_columns(first, sizing.dictionary),
                write_statistics=True,
            )
        return self._writer

    # ---- finishing ------------------------------------------------------------------------------

    def close(self) -> dict[str, Any]:
        writer = self._open()  # an empty file group still gets a (row-less) file
        footer = (
            footer_metadata(self._bloom, self._min_key, self._max_key)
            if self.spec.populate_meta_fields
            else {}
        )
        if footer:
            writer.add_key_value_metadata(footer)
        writer.close()
        self._sink.close()
        fault_point("write.during_data_files")  # executor side: a data file is complete
        size = self.spec.storage.status(self.path)
        size_bytes = size.size_bytes if size else 0
        return {
            "partition_path": self.partition,
            "file_id": self.file_id,
            "file_name": self.file_name,
            "io_type": self.io_type.value,
            "prev_commit": self.prev_commit,
            **self.counts,
            "file_size_bytes": size_bytes,
            "write_bytes": size_bytes,
            "runtime_ms": int((time.monotonic() - self._started) * 1000),
            **self._index_results(writer),
        }

    def _index_results(self, writer: pq.ParquetWriter) -> dict[str, Any]:
        """The side results the spec asks for: key changes, and the column ranges of the footer
        the parquet writer just wrote (no second read of the file)."""
        results: dict[str, Any] = {}
        if self.spec.collect_keys and self.spec.populate_meta_fields:
            results.update(key_changes(self._written_keys, self.previous_keys))
        if self.spec.collect_column_ranges:
            ranges = footer_column_ranges(self.file_name, writer.writer.metadata)
            results[COLUMN_RANGES] = encode_column_ranges(ranges)
        return results


#: Values of a column's first rows that decide whether its dictionary pays (`dictionary_columns`).
DICTIONARY_SAMPLE_ROWS = 10_000
_UNIQUE_COLUMNS = (COMMIT_SEQNO, RECORD_KEY)


def _variable_width(kind: pa.DataType) -> bool:
    return (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
    )


def dictionary_columns(first: pa.Table | None, enabled: bool) -> bool | list[str]:
    """The columns to dictionary-encode (`hoodie.parquet.dictionary.enabled`), as parquet-mr (the
    writer under Hudi) ends up encoding them: it starts every column with a dictionary and falls
    back to plain encoding when the first page's dictionary plus its indices are not smaller than
    the plain values. The same test on the first `DICTIONARY_SAMPLE_ROWS` values of each column
    (`dictionary_pays`) skips building dictionaries of unique values (keys, sequence numbers,
    timestamps, measures) that would only be abandoned or, below the page limit, written bigger
    than plain: about half the encoder's CPU and smaller files. Without rows yet: every column
    but the per-row unique meta columns."""
    if not enabled:
        return False
    if first is None:
        return []  # no rows: an empty file
    if any(pa.types.is_nested(f.type) for f in first.schema):
        return True  # a name list would have to spell every nested leaf's path
    sample = first.slice(0, DICTIONARY_SAMPLE_ROWS)
    return [
        name
        for name in sample.column_names
        if name not in _UNIQUE_COLUMNS and dictionary_pays(sample.column(name))
    ]


def dictionary_pays(values: pa.ChunkedArray) -> bool:
    """parquet-mr's test (`isCompressionSatisfying`): dictionary + bit-packed indices < plain."""
    count = len(values) - values.null_count
    if count == 0:
        return True
    kind = values.type
    if pa.types.is_boolean(kind):
        return False  # parquet-mr has no dictionary for booleans
    if _variable_width(kind):
        width = pc.sum(pc.binary_length(values)).as_py() / count + 4  # length-prefixed
    else:
        try:
            width = max(kind.bit_width // 8, 1)
        except ValueError:
            return True
    distinct = pc.count_distinct(values).as_py()
    index_bytes = count * max(int(distinct - 1).bit_length(), 1) / 8
    return distinct * width + index_bytes < count * width


def _seqnos(prefix: str, start: int, count: int) -> pa.Array:
    numbers = pa.array(np.arange(start, start + count, dtype=np.int64)).cast(pa.string())
    return pc.binary_join_element_wise(pa.repeat(prefix, count), numbers, "")


def meta_free(table: pa.Table) -> pa.Table:
    return table.drop_columns([c for c in META_FIELDS if c in table.column_names])
