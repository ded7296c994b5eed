"""The table schema, resolved as Hudi's `TableSchemaResolver` does (§2.7)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.codec.schema import avro_to_arrow, without_meta_fields
from pyhudi.table.context import TableContext


def latest_avro_schema(ctx: TableContext, as_of: str | None = None) -> str | None:
    """The writer schema (Avro JSON, no meta fields) of the latest completed write with one."""
    commits = ctx.active.timeline.commits().up_to(as_of)
    for instant in reversed(commits.instants):
        schema = ctx.active.commit_schema(instant)
        if schema:
            return schema
    return ctx.config.create_schema


def table_arrow_schema(ctx: TableContext, as_of: str | None = None) -> pa.Schema | None:
    """The data schema (no meta fields) as Arrow, or None for a table that never had one."""
    avro = latest_avro_schema(ctx, as_of)
    if avro:
        return avro_to_arrow(avro)
    return _schema_from_files(ctx, as_of)


def _schema_from_files(ctx: TableContext, as_of: str | None) -> pa.Schema | None:
    base_files = ctx.view().latest_base_files(as_of)
    if not base_files:
        return None
    path = ctx.path(base_files[0].relative_path)
    with ctx.storage.open_input(path) as handle:
        return without_meta_fields(pq.read_schema(handle))
