"""Bucket index (`hoodie.index.type=BUCKET`, SIMPLE engine): a record's file group is a function of
its key, so writes need no index lookup.

bucket = (javaListHash(hash key values) & Integer.MAX_VALUE) % numBuckets, where the hash key values
are the record key (or, for `f1:v1,f2:v2` keys, the values of `hoodie.bucket.index.hash.field`) and
javaListHash is `java.util.List.hashCode` of those strings (31 * h + String.hashCode, int overflow).
A bucket's file id is a UUID whose first 8 characters are the zero-padded bucket number, plus `-0`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping

import numpy as np
import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F

from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.exceptions import ConfigError
from pyhudi.index.table_layout import bucket_of_file_id
from pyhudi.spark_env import rows_frame

_TWO_32 = 1 << 32
_KNOWN_FIELDS = [
    pa.field("b_partition", pa.string()),
    pa.field("b_bucket", pa.int64()),
    pa.field("b_fid", pa.string()),
    pa.field("b_base", pa.string()),
]


def java_string_hash(column: Column) -> Column:
    """`String.hashCode` (as an unsigned 32-bit value in a long) of a string column, computed by the
    JVM itself (`java.util.Objects.hashCode` through `reflect`: no per-character array work)."""
    signed = F.reflect(F.lit("java.util.Objects"), F.lit("hashCode"), column).cast("long")
    return F.pmod(signed, F.lit(_TWO_32))


def _hash_values(
    record_key: Column, hash_fields: tuple[str, ...] | None, complex_key: bool
) -> list[Column]:
    if not complex_key or not hash_fields:
        return [record_key]
    # `f1:v1,f2:v2` -> the values of the hash fields, in the configured order.
    pairs = F.split(record_key, ",")
    values = []
    for name in hash_fields:
        matching = F.filter(pairs, _field_pair(name))
        values.append(F.substring_index(F.element_at(matching, 1), ":", -1))
    return values


def _field_pair(name: str) -> Callable[[Column], Column]:
    """`F.filter` predicate for `name:value` pairs (one parameter: two would mean (element, index))."""
    return lambda pair: F.startswith(pair, F.lit(f"{name}:"))


def bucket_id_column(
    record_key: Column, num_buckets: int, hash_fields: tuple[str, ...] | None, complex_key: bool
) -> Column:
    h = F.lit(1).cast("long")
    for value in _hash_values(record_key, hash_fields, complex_key):
        h = (h * 31 + java_string_hash(value)) % _TWO_32
    return (h % (1 << 31)) % num_buckets  # & Integer.MAX_VALUE drops the sign bit


def bucket_file_id(bucket: int) -> str:
    return f"{bucket:08d}{str(uuid.uuid4())[8:]}-0"


def java_string_hashes(keys: pa.Array) -> np.ndarray:
    """`String.hashCode` of each key (uint32), vectorised per key length over UTF-16 code units."""
    values = keys.to_pylist()
    out = np.zeros(len(values), np.uint32)
    units = [np.frombuffer(v.encode("utf-16-le"), dtype="<u2") for v in values]
    lengths = np.array([len(u) for u in units])
    for length in np.unique(lengths):
        rows = np.flatnonzero(lengths == length)
        if length == 0:
            continue
        matrix = np.stack([units[i] for i in rows]).astype(np.uint32)
        h = np.zeros(len(rows), np.uint32)
        for column in matrix.T:
            h = h * np.uint32(31) + column
        out[rows] = h
    return out


def bucket_ids(keys: pa.Array, num_buckets: int) -> np.ndarray:
    """Bucket of each (simple) record key, as `bucket_id_column` computes it."""
    with np.errstate(over="ignore"):
        h = np.uint32(31) + java_string_hashes(keys)
    return (h & np.uint32(0x7FFFFFFF)).astype(np.int64) % num_buckets


# ---- routing records of a pyhudi.write ------------------------------------------------------


def existing_buckets(ctx, partitions=None) -> dict[tuple[str, int], tuple[str, str | None]]:  # type: ignore[no-untyped-def]
    """(partition, bucket) -> (file id, base file name) of the table's latest file slices."""
    found: dict[tuple[str, int], tuple[str, str | None]] = {}
    for file_slice in ctx.view().latest_file_slices(partitions=partitions):
        bucket = bucket_of_file_id(file_slice.file_id)
        if bucket is not None:
            base = file_slice.base_file.file_name if file_slice.base_file else None
            found[(file_slice.partition_path, bucket)] = (file_slice.file_id, base)
    return found


def check_bucket_count(known: Mapping[tuple[str, int], object], num_buckets: int) -> None:
    """A table's buckets are fixed: a file group of a bucket beyond `num_buckets` means the option
    is smaller than the table's count, and keys would be hashed into other buckets than those
    that hold them (their next upsert would write them again)."""
    beyond = sorted((bucket, partition) for partition, bucket in known if bucket >= num_buckets)
    if beyond:
        bucket, partition = beyond[-1]
        raise ConfigError(
            f"hoodie.bucket.index.num.buckets={num_buckets}, but the table has bucket {bucket} "
            f"(partition {partition!r}): the number of buckets of a table cannot change; write "
            "with the number the table was created with"
        )


def route_by_bucket(
    spark,
    ctx,
    records,
    num_buckets: int,
    hash_fields,
    complex_key: bool,
    fid_column: str,
    base_column: str,
    instant_time: str,
    known: dict[tuple[str, int], tuple[str, str | None]] | None = None,
):  # type: ignore[no-untyped-def]
    """Add the target file id and base file of every record: its bucket's file group, or a new one
    whose id is derived from (instant, partition, bucket), so no pass over the records is needed to
    name new buckets first. `known`: the table's buckets (`existing_buckets`), if already read."""

    bucket = "__pyhudi_bucket"
    bucketed = records.withColumn(
        bucket, bucket_id_column(F.col(RECORD_KEY), num_buckets, hash_fields, complex_key)
    )
    new_fid = _new_bucket_file_id(F.col(PARTITION_PATH), F.col(bucket), instant_time)
    if known is None:
        known = existing_buckets(ctx)
    if not known:
        return (
            bucketed.withColumn(fid_column, new_fid)
            .withColumn(base_column, F.lit(None).cast("string"))
            .drop(bucket)
        )
    rows = [(p, b, fid, base) for (p, b), (fid, base) in sorted(known.items())]
    table = rows_frame(spark, rows, _KNOWN_FIELDS)
    joined = bucketed.join(
        F.broadcast(table),
        (bucketed[PARTITION_PATH] == table["b_partition"])
        & (bucketed[bucket] == table["b_bucket"]),
        "left",
    )
    return (
        joined.withColumn(fid_column, F.coalesce(F.col("b_fid"), new_fid))
        .withColumn(base_column, F.col("b_base"))
        .drop(bucket, "b_partition", "b_bucket", "b_fid", "b_base")
    )


def _new_bucket_file_id(partition: Column, bucket: Column, instant_time: str) -> Column:
    """`codec.file_names.new_bucket_file_id` as an expression: the 8-digit bucket, then a
    UUID-shaped tail hashed from (instant, partition, bucket) (the same in every task), then `-0`."""
    digest = F.sha2(F.concat_ws(":", F.lit(f"pyhudi:{instant_time}"), partition, bucket), 256)
    parts = [
        F.substring(digest, start, length) for start, length in ((1, 4), (5, 4), (9, 4), (13, 12))
    ]
    return F.concat(
        F.lpad(bucket.cast("string"), 8, "0"), F.lit("-"), F.concat_ws("-", *parts), F.lit("-0")
    )
