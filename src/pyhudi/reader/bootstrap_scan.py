"""Native Spark scans of METADATA_ONLY bootstrap slices (skeleton + parquet source, no log files).

A skeleton holds nothing a Spark scan of its source cannot rebuild: commit time `00000000000001`,
sequence numbers `<instant>_<task>_<row>`, the key generator's record key, the partition path and the
skeleton's name. So instead of zipping skeleton rows to source rows in Python, the source files are
read by Spark's own parquet reader (column pruning, vectorised decoding) with `_metadata.row_index`,
and the meta columns are computed from the row position and per-file constants. Before trusting that,
the planner checks every skeleton against its source on the driver, from the footers alone:

* the row counts are equal (otherwise the source changed: `CorruptFileError`, as on the Arrow path);
* the skeleton's commit time is a single value and its sequence numbers start at `<prefix>0`;
* the key generator reproduces the first rows' record keys of one skeleton.

When a check cannot be made (ORC sources, footers without statistics, a key mismatch) the slices go
through the Arrow stitching reader instead, which reads the skeleton's stored values.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import quote

import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.codec.schema import (
    COMMIT_SEQNO,
    COMMIT_TIME,
    FILE_NAME,
    META_FIELDS,
    PARTITION_PATH,
    RECORD_KEY,
)
from pyhudi.exceptions import CorruptFileError
from pyhudi.file_group.stitch import hive_folder_values, with_partition_columns
from pyhudi.keygen.arrow import record_keys
from pyhudi.keygen.spark import record_key_column
from pyhudi.keygen.spec import KeyGenSpec, table_keygen_spec
from pyhudi.model.file import FileSlice
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext

_FILE, _ROW = "__pyhudi_file", "__pyhudi_row"
_PREFIX = "__pyhudi_seq_prefix"
_SAMPLE_ROWS = 64
_CHECKED: dict[tuple, _Stitched | None] = {}
_CHECKED_MAX = 100_000
_KEYS_MATCH: dict[tuple[str, str, str], bool] = {}
_SERIAL_CHECKS = 32  # footers to read before a thread pool pays for itself


@dataclass(frozen=True)
class _Stitched:
    spark_path: str  # the source file as Spark's `_metadata.file_path` spells it
    source_uri: str
    partition_path: str
    skeleton_name: str
    commit_time: str
    seqno_prefix: str


def native_stitched_frame(
    spark: SparkSession,
    ctx: TableContext,
    slices: Sequence[FileSlice],
    schema: T.StructType,
    *,
    used: frozenset[str] | None = None,
) -> DataFrame | None:
    """The slices as one native DataFrame in `schema`, or None when they must be stitched in Arrow.
    `used`: the only columns the query reads (None: any); when none of them is derived from the
    file (meta columns, partition columns only in folder names), the frame is the plain source
    scan (`_metadata` unreferenced) and the unused derived columns are nulls."""
    if not slices or any(
        s.log_files or not s.base_file or not s.base_file.bootstrap_source_path for s in slices
    ):
        return None
    if any(not s.base_file.bootstrap_source_path.endswith(".parquet") for s in slices):  # type: ignore[union-attr]
        return None
    if len(slices) > _SERIAL_CHECKS:
        with ThreadPoolExecutor(max_workers=8) as pool:
            files = list(pool.map(lambda s: _check(ctx, s), slices))
    else:
        files = [_check(ctx, s) for s in slices]
    if any(f is None for f in files):
        return None
    stitched: list[_Stitched] = files  # type: ignore[assignment]

    keygen = table_keygen_spec(ctx.config)
    sample = (stitched[0].source_uri, stitched[0].skeleton_name, repr(keygen))
    if sample not in _KEYS_MATCH:
        _KEYS_MATCH[sample] = _keys_match(ctx, slices[0], keygen)
    if not _KEYS_MATCH[sample]:
        return None
    in_files = set(_source_columns(stitched[0].source_uri))
    data_fields = [f for f in schema if f.name not in META_FIELDS]
    read_schema = T.StructType([f for f in data_fields if f.name in in_files])
    extra = [f.name for f in data_fields if f.name not in in_files]
    source = spark.read.schema(read_schema).parquet(*(f.source_uri for f in stitched))
    if used is not None and not used & {*META_FIELDS, *extra}:
        return _plain_select(source, read_schema, schema)
    names = (PARTITION_PATH, FILE_NAME, COMMIT_TIME, _PREFIX, *extra)
    # Per-file constants as one literal map keyed by the file path: no join, no Python job, and
    # Spark prunes it (and the path column) from queries that use no meta column.
    constants = {
        f.spark_path: dict(
            zip(
                names,
                (
                    f.partition_path,
                    f.skeleton_name,
                    f.commit_time,
                    f.seqno_prefix,
                    *(hive_folder_values(f.partition_path).get(n) for n in extra),
                ),
                strict=True,
            )
        )
        for f in stitched
    }
    entry = ",".join(f"{_quoted(n)}:string" for n in names)
    literal = json.dumps(constants).replace("\\", "\\\\").replace("'", "\\'")
    # One SQL expression: built with one call into the JVM (each Column call is a round trip).
    info = F.expr(
        f"coalesce(from_json('{literal}', 'map<string,struct<{entry}>>')[_metadata.file_path], "
        "raise_error(concat('bootstrap source file not in the read plan: ', _metadata.file_path)))"
    )
    return _stitched_select(source, read_schema, schema, keygen, {n: info[n] for n in names})


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _plain_select(source: DataFrame, stored: T.StructType, schema: T.StructType) -> DataFrame:
    """The table's columns over the source scan: data as stored, nulls for the derived ones."""
    return source.select(*(_stored_column(field, stored) for field in schema))


def _stored_column(field: T.StructField, stored: T.StructType) -> Column:
    """`field` as the scan stores it, cast when stored as another type, null when not stored."""
    name = _quoted(field.name)
    if field.name in stored.names and stored[field.name].dataType == field.dataType:
        return F.expr(name)
    value = F.expr(name) if field.name in stored.names else F.lit(None)
    return value.cast(field.dataType).alias(field.name)


def _stitched_select(
    source: DataFrame,
    read_schema: T.StructType,
    schema: T.StructType,
    keygen: KeyGenSpec,
    constants: dict[str, Column],
) -> DataFrame:
    """The table's columns over the source scan: data as stored, meta columns derived."""
    key_fields = {k.split(".")[0] for k in keygen.record_key_fields}
    if key_fields <= set(read_schema.names):
        # One select over the scan: each select is a round of analysis on the driver.
        staged, row, stored = source, F.expr("_metadata.row_index"), read_schema
    else:  # a key made of hive folder values needs them as columns first
        staged = source.select(
            *(F.col(_quoted(f.name)) for f in read_schema),
            F.col("_metadata.row_index").alias(_ROW),
            *(c.alias(n) for n, c in constants.items()),
        )
        row, constants = F.col(_ROW), {n: F.col(_quoted(n)) for n in constants}
        stored = T.StructType([f for f in staged.schema if f.name not in constants])
    derived = {
        COMMIT_SEQNO: F.concat(constants[_PREFIX], row.cast("string")),
        RECORD_KEY: record_key_column(staged, keygen),
        **{n: c for n, c in constants.items() if n != _PREFIX},
    }
    out = []
    for field in schema:
        if field.name in derived:
            column = derived[field.name]
            if field.name in constants and field.dataType != T.StringType():
                column = column.cast(field.dataType)
            out.append(column.alias(field.name))
        else:
            out.append(_stored_column(field, stored))
    return staged.select(*out)


def _check(ctx: TableContext, file_slice: FileSlice) -> _Stitched | None:
    """Footer checks of one skeleton against its source, remembered while the source is unchanged."""
    base = file_slice.base_file
    assert base is not None and base.bootstrap_source_path is not None
    storage, path = Storage.for_uri(base.bootstrap_source_path)
    status = storage.status(path)
    if status is None:
        raise CorruptFileError(
            f"bootstrap source file {base.bootstrap_source_path} of {base.relative_path} is gone"
        )
    key = (
        ctx.storage.uri(ctx.path(base.relative_path)),
        base.size_bytes,
        base.bootstrap_source_path,
        status.size_bytes,
        status.mtime_ns,
    )
    if key not in _CHECKED:
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.clear()
        _CHECKED[key] = _check_footers(ctx, file_slice)
    return _CHECKED[key]


def _check_footers(ctx: TableContext, file_slice: FileSlice) -> _Stitched | None:
    base = file_slice.base_file
    assert base is not None and base.bootstrap_source_path is not None
    with ctx.storage.open_input(ctx.path(base.relative_path)) as handle:
        skeleton = pq.ParquetFile(handle)
        rows = skeleton.metadata.num_rows
        time_range = _string_range(skeleton, COMMIT_TIME)
        seq_range = _string_range(skeleton, COMMIT_SEQNO)
    storage, path = Storage.for_uri(base.bootstrap_source_path)
    with storage.open_input(path) as handle:
        source_rows = pq.ParquetFile(handle).metadata.num_rows
    if rows != source_rows:
        raise CorruptFileError(
            f"bootstrap skeleton {base.relative_path} has {rows} rows but its source file "
            f"{base.bootstrap_source_path} has {source_rows}: the source changed after the bootstrap"
        )
    if rows and (time_range is None or seq_range is None or time_range[0] != time_range[1]):
        return None
    prefix = ""
    if rows:
        first = seq_range[0]  # type: ignore[index]
        prefix = first[: first.rfind("_") + 1]
        if not first.endswith("_0") or not seq_range[1].startswith(prefix):  # type: ignore[index]
            return None
    return _Stitched(
        spark_path=_spark_path(storage, path),
        source_uri=base.bootstrap_source_path,
        partition_path=file_slice.partition_path,
        skeleton_name=posixpath.basename(base.relative_path),
        commit_time=time_range[0] if time_range else "",
        seqno_prefix=prefix,
    )


def _keys_match(ctx: TableContext, file_slice: FileSlice, keygen: KeyGenSpec) -> bool:
    """The key generator reproduces the first record keys stored in the slice's skeleton."""

    base = file_slice.base_file
    assert base is not None and base.bootstrap_source_path is not None
    with ctx.storage.open_input(ctx.path(base.relative_path)) as handle:
        skeleton = pq.ParquetFile(handle)
        if not skeleton.metadata.num_rows:
            return True
        stored = skeleton.read_row_group(0, columns=[RECORD_KEY]).column(0)
    storage, path = Storage.for_uri(base.bootstrap_source_path)
    fields = {f.split(".")[0] for f in keygen.record_key_fields}
    with storage.open_input(path) as handle:
        source = pq.ParquetFile(handle)
        present = [c for c in source.schema_arrow.names if c in fields]
        rows = source.read_row_group(0, columns=present)
    hive = tuple(f for f in fields if f not in present)
    rows = with_partition_columns(rows, hive_folder_values(file_slice.partition_path), hive)
    count = min(_SAMPLE_ROWS, rows.num_rows, len(stored))
    try:
        derived = record_keys(rows.slice(0, count), keygen)
    except Exception:
        return False
    return derived.to_pylist() == stored.slice(0, count).to_pylist()


def _string_range(parquet: pq.ParquetFile, column: str) -> tuple[str, str] | None:
    names = parquet.schema_arrow.names
    if column not in names:
        return None
    index = names.index(column)
    low: str | None = None
    high: str | None = None
    for group in range(parquet.metadata.num_row_groups):
        stats = parquet.metadata.row_group(group).column(index).statistics
        if stats is None or not stats.has_min_max:
            return None
        low = stats.min if low is None else min(low, stats.min)
        high = stats.max if high is None else max(high, stats.max)
    if low is None or high is None:
        return None
    return (
        low.decode() if isinstance(low, bytes) else str(low),
        high.decode() if isinstance(high, bytes) else str(high),
    )


def _source_columns(uri: str) -> list[str]:
    storage, path = Storage.for_uri(uri)
    with storage.open_input(path) as handle:
        return pq.read_schema(handle).names


def _spark_path(storage: Storage, path: str) -> str:
    """Hadoop's `Path.toUri().toString()`: characters a URI path cannot hold are %-escaped."""
    quoted = quote(path, safe="/:@!$&'()*+,;=-._~")
    if storage.is_local:
        return "file:" + quoted
    return storage.uri("").rstrip("/") + "/" + quoted.lstrip("/")
