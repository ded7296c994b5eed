"""Merge-on-read benchmarks: upsert and snapshot read vs copy-on-write, Avro block codec vs fastavro."""

from __future__ import annotations

import io
import shutil
import statistics
import time

import fastavro
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import pyhudi
from bench.common import (
    HUDI_OPTIONS,
    Measure,
    fresh,
    materialize,
    median_pair,
    path,
    source_data,
    upsert_batch,
)
from pyhudi.codec.log import avro_columnar
from pyhudi.codec.log.avro_content import encode_avro_records, parsed_avro_schema
from pyhudi.codec.schema import arrow_to_avro_json
from pyhudi.file_group.log_append import avro_ready_rows
from pyhudi.file_group.log_scan import _avro_table

MOR = {**HUDI_OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def run(spark: SparkSession) -> dict[str, Measure]:
    source = materialize(spark, source_data(spark), path("source"))
    batch = materialize(spark, upsert_batch(spark), path("upsert_batch"))
    for table, options in (("mor_bulk", MOR), ("cow_bulk_for_mor", HUDI_OPTIONS)):
        if not shutil.os.path.exists(path(table, ".hoodie")):
            pyhudi.write(
                source,
                fresh(path(table)),
                {**options, "hoodie.datasource.write.operation": "bulk_insert"},
            )
    return {
        "mor_upsert_vs_cow_upsert": upsert(batch),
        "mor_snapshot_read_vs_cow_snapshot_read": snapshot_read(spark),
        **avro_codec(source),
    }


def _copy(source: str, target: str) -> None:
    fresh(target)
    shutil.copytree(source, target)


def upsert(batch) -> Measure:  # type: ignore[no-untyped-def]
    def prepare(run: int) -> None:
        _copy(path("mor_bulk"), path("mor_upsert"))
        _copy(path("cow_bulk_for_mor"), path("cow_upsert_for_mor"))

    ours, theirs = median_pair(
        prepare,
        lambda run: pyhudi.write(
            batch, path("mor_upsert"), {**MOR, "hoodie.datasource.write.operation": "upsert"}
        ),
        lambda run: pyhudi.write(
            batch,
            path("cow_upsert_for_mor"),
            {**HUDI_OPTIONS, "hoodie.datasource.write.operation": "upsert"},
        ),
    )
    return Measure(ours, theirs, target=0.5)


def snapshot_read(spark: SparkSession) -> Measure:
    def query(table: str):  # type: ignore[no-untyped-def]
        return pyhudi.read(spark, path(table)).agg(F.count(F.lit(1)), F.sum("fare")).collect()

    ours, theirs = median_pair(
        lambda run: None,
        lambda run: query("mor_upsert"),
        lambda run: query("cow_upsert_for_mor"),
        runs=5,
    )
    return Measure(ours, theirs, target=1.5, runs=5)


def avro_codec(source, records: int = 1_000_000) -> dict[str, Measure]:  # type: ignore[no-untyped-def]
    """pyhudi's block codec (Arrow table <-> block content, as log writes and reads use it) against a
    plain fastavro `schemaless_writer`/`schemaless_reader` loop over the same records (Python dicts)."""
    table = source.limit(records).toArrow()
    table = table.append_column("_hoodie_record_key", table.column("key"))
    schema_json = arrow_to_avro_json(table.schema, "bench", with_meta_fields=True)
    arrow_rows = pyhudi_rows_with_meta(table)
    rows = avro_ready_rows(arrow_rows)
    parsed = parsed_avro_schema(schema_json)

    def plain_encode() -> list[bytes]:
        out = []
        for row in rows:
            buffer = io.BytesIO()
            fastavro.schemaless_writer(buffer, parsed, row)
            out.append(buffer.getvalue())
        return out

    encoded = avro_columnar.encode_block_content(arrow_rows, schema_json)
    assert encoded == encode_avro_records(schema_json, rows)  # the same bytes as fastavro's
    plain = plain_encode()

    def plain_decode() -> list:
        return [fastavro.schemaless_reader(io.BytesIO(item), parsed, None) for item in plain]

    ours_encode = _median(lambda: avro_columnar.encode_block_content(arrow_rows, schema_json))
    base_encode = _median(plain_encode)
    ours_decode = _median(lambda: _avro_table(encoded, schema_json))
    base_decode = _median(plain_decode)
    # Throughputs (records per second): higher is better, ratio = pyhudi / fastavro.
    return {
        "avro_block_encode_throughput": Measure(
            records / ours_encode, records / base_encode, target=0.8, higher_is_better=True
        ),
        "avro_block_decode_throughput": Measure(
            records / ours_decode, records / base_decode, target=0.8, higher_is_better=True
        ),
    }


def pyhudi_rows_with_meta(table):  # type: ignore[no-untyped-def]
    import pyarrow as pa

    from pyhudi.codec.schema import with_meta_fields
    from pyhudi.file_group.base_file import conform

    filled = table
    for name in (
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_partition_path",
        "_hoodie_file_name",
    ):
        filled = filled.append_column(
            name, pa.repeat("20261121000000000", table.num_rows).cast(pa.string())
        )
    return conform(filled, with_meta_fields(table.schema))


def _median(action, runs: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)
