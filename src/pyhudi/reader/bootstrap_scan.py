"""Native Spark scans of METADATA_ONLY bootstrap slices (skeleton + parquet source, no log files).

A skeleton holds nothing a Spark scan of its source cannot rebuild: commit time `00000000000001`,
sequence numbers `<instant>_<task>_<row>`, the key generator's record key, the partition path and the
skeleton's name. So instead of zipping skeleton rows to source rows in Python, the source files are
read by Spark's own parquet reader (column pruning, vectorised decoding) with each row's position
in its file, and the meta columns are computed from the row position and per-file constants looked
up by `input_file_name()`: expressions Spark prunes, so a query that uses no meta column scans what
a read of the source files scans (`_metadata` would stay in the scan). Before trusting that,
the planner checks every skeleton against its source on the driver, from the footers alone:

* the row counts are equal (otherwise the source changed: `CorruptFileError`, as on the Arrow path);
* the skeleton's commit time is a single value and its sequence numbers start at `<prefix>0`;
* the key generator reproduces the first rows' record keys of one skeleton.

When a check cannot be made (ORC sources, footers without statistics, a key mismatch) the slices go
through the Arrow stitching reader instead, which reads the skeleton's stored values.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import quote

import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
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
from pyhudi.keygen.spark_sql import (
    record_key_sql,
    sql_identifier,
    sql_json_constant,
    sql_string,
    sql_type,
)
from pyhudi.keygen.spec import KeyGenSpec, table_keygen_spec
from pyhudi.model.file import FileSlice
from pyhudi.reader.pruning import PartitionFilter
from pyhudi.reader.row_filters import rows_condition
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext

# Spark's parquet reader fills a requested column of this name (its
# `FileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME`, what `_metadata.row_index` is read through) with
# each row's position in its file. Declared in the read schema it is a plain column, which Spark
# prunes when a query does not use it; `_metadata` is not: once referenced, Spark 4 keeps it in the
# scan (file path, name, size, ... and the row index, per row) whatever the query reads.
ROW_INDEX = "_tmp_metadata_row_index"
#: Spark version -> whether its parquet reader fills `ROW_INDEX` (an internal name a later Spark
#: may change: then the column reads as nulls and the Arrow stitcher derives the sequence numbers).
_ROW_INDEX_FILLED: dict[str, bool] = {}
_PREFIX = "__pyhudi_seq_prefix"
_FILE = "__pyhudi_file"
_SAMPLE_ROWS = 64
_CHECKED: dict[tuple, _Stitched | None] = {}
_CHECKED_MAX = 100_000
_KEYS_MATCH: dict[tuple[str, str, str], bool] = {}
_SERIAL_CHECKS = 32  # footers to read before a thread pool pays for itself


@dataclass(frozen=True)
class _Stitched:
    spark_path: str  # the source file as Spark's `input_file_name()` spells it
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
    filters: Sequence[PartitionFilter] = (),
) -> DataFrame | None:
    """The slices as one native DataFrame in `schema`, or None when they must be stitched in Arrow.
    `used`: the only columns the query reads (None: any); when none of them is derived from the
    file (meta columns, partition columns only in folder names), the frame is the plain source
    scan and the unused derived columns are nulls. `filters` on columns the files store are
    applied under the derived columns too, so Spark pushes them into the parquet scan (a filter
    above `input_file_name()`, a non-deterministic expression, stays above it); the caller still
    applies all of them to the rows."""
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
    if ROW_INDEX in in_files or not _row_index_filled(spark, stitched[0].source_uri):
        return None
    data_fields = [f for f in schema if f.name not in META_FIELDS]
    read_schema = T.StructType([f for f in data_fields if f.name in in_files])
    extra = [f.name for f in data_fields if f.name not in in_files]
    uris = [f.source_uri for f in stitched]
    if used is not None and not used & {*META_FIELDS, *extra}:
        source = spark.read.schema(read_schema).parquet(*uris)
        return source.selectExpr(*(_stored_sql(field, read_schema) for field in schema))
    with_index = T.StructType([*read_schema, T.StructField(ROW_INDEX, T.LongType())])
    source = spark.read.schema(with_index).parquet(*uris)
    stored = rows_condition([f for f in filters if f[0] in read_schema.names])
    if stored is not None:
        source = source.filter(stored)
    # `input_file_name()` is non-deterministic, so the projection computing it is one a filter
    # cannot cross: it computes nothing else; the per-file lookups sit above it and run only for
    # rows that pass a filter. The table's columns are one selectExpr: one call into the JVM.
    named = source.selectExpr("*", f"input_file_name() AS {_FILE}")
    return named.selectExpr(*_stitched_sql(read_schema, schema, keygen, stitched, extra))


def _row_index_filled(spark: SparkSession, uri: str) -> bool:
    """Whether this Spark fills `ROW_INDEX` with row positions: read for two rows of a source file
    once per Spark version (a file with no rows tells nothing: the Arrow stitcher reads it)."""
    version = spark.version
    if version not in _ROW_INDEX_FILLED:
        only_index = T.StructType([T.StructField(ROW_INDEX, T.LongType())])
        rows = [r[0] for r in spark.read.schema(only_index).parquet(uri).limit(2).collect()]
        if not rows:
            return False
        _ROW_INDEX_FILLED[version] = rows == list(range(len(rows)))
    return _ROW_INDEX_FILLED[version]


def _stored_sql(field: T.StructField, stored: T.StructType) -> str:
    """`field` as the scan stores it, cast when stored as another type, null when not stored."""
    name = sql_identifier(field.name)
    if field.name in stored.names and stored[field.name].dataType == field.dataType:
        return name
    value = name if field.name in stored.names else "NULL"
    return f"CAST({value} AS {sql_type(field.dataType)}) AS {name}"


def _stitched_sql(
    read_schema: T.StructType,
    schema: T.StructType,
    keygen: KeyGenSpec,
    stitched: Sequence[_Stitched],
    extra: Sequence[str],
) -> list[str]:
    """The table's columns over the source scan as SQL: data as stored, meta columns derived."""
    times = {f.commit_time for f in stitched if f.commit_time}  # empty skeletons have none
    per_file = [PARTITION_PATH, FILE_NAME, _PREFIX, *extra]
    if len(times) > 1:
        per_file.append(COMMIT_TIME)
    lookup = _per_file_lookup(stitched, per_file)  # one per row: Spark shares it between fields
    derived = {name: f"{lookup}.{sql_identifier(name)}" for name in per_file}
    if len(times) <= 1:
        # nullif: a nullable column, as the table's schema (and a skeleton's column) has it
        derived[COMMIT_TIME] = f"nullif({sql_string(times.pop() if times else '')}, '')"
    derived[COMMIT_SEQNO] = f"concat({derived[_PREFIX]}, CAST({ROW_INDEX} AS STRING))"
    derived[RECORD_KEY] = record_key_sql(keygen, read_schema, {n: derived[n] for n in extra})
    out = []
    for field in schema:
        if field.name not in derived:
            out.append(_stored_sql(field, read_schema))
            continue
        value = derived[field.name]
        if field.dataType != T.StringType():
            value = f"CAST({value} AS {sql_type(field.dataType)})"
        out.append(f"{value} AS {sql_identifier(field.name)}")
    return out


def _per_file_lookup(stitched: Sequence[_Stitched], names: Sequence[str]) -> str:
    """SQL for the struct of `names` of the row's source file (`_FILE`): a literal map keyed by
    the file's name as `input_file_name()` spells it (no join, no Python job)."""
    constants = {}
    for f in stitched:
        known = {
            **hive_folder_values(f.partition_path),
            PARTITION_PATH: f.partition_path,
            FILE_NAME: f.skeleton_name,
            COMMIT_TIME: f.commit_time,
            _PREFIX: f.seqno_prefix,
        }
        constants[f.spark_path] = {name: known.get(name) for name in names}
    entry = ",".join(f"{sql_identifier(n)}:string" for n in names)
    lookup = sql_json_constant(constants, f"map<string,struct<{entry}>>")
    return (
        f"coalesce({lookup}[{_FILE}], "
        f"raise_error(concat('bootstrap source file not in the read plan: ', {_FILE})))"
    )


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
    """The file as `input_file_name()` spells it: a URI (`file:///...` for local files) whose path
    %-escapes the characters a URI path cannot hold."""
    return storage.uri(quote(path, safe="/:@!$&'()*+,;=-._~"))
