"""The table a MERGE, UPDATE or DELETE changes: its snapshot as the statement reads it, the write
settings it commits with, and the one write (one instant) that commits the statement."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from pyhudi.client.write_client import write as client_write
from pyhudi.codec.schema import META_FIELDS
from pyhudi.config import write as write_keys
from pyhudi.dml.clauses import Expr, partition_filters
from pyhudi.exceptions import ConfigError, UnsupportedOperationError
from pyhudi.merge.config import OVERWRITE_WITH_LATEST
from pyhudi.model.results import CommitResult
from pyhudi.reader.dataframe import read as read_frame
from pyhudi.spark.datasource import register
from pyhudi.spark.sync import sync_enabled, sync_to_catalog
from pyhudi.table.context import TableContext
from pyhudi.table.schema import table_arrow_schema
from pyhudi.writer.config import WriteConfig, resolve_write_config

#: Keys a statement decides itself: a user's value would change what it means.
STATEMENT_KEYS = (
    write_keys.OPERATION,
    write_keys.PAYLOAD_CLASS,
    write_keys.COMBINE_BEFORE_UPSERT,
    write_keys.COMBINE_BEFORE_DELETE,
)


@dataclass(frozen=True)
class StatementTarget:
    """An existing table, opened for one statement."""

    spark: SparkSession
    path: str
    ctx: TableContext
    options: dict[str, str]
    #: MERGE decides which update wins (its ordering rule): on table version 6 its rows overwrite
    #: the stored ones, whatever the table's payload class says (Hudi 0.15); on 8 and 9 the
    #: table's merge mode decides, as Hudi 1.x's.
    overwrite: bool = False

    @classmethod
    def open(
        cls,
        spark: SparkSession,
        path: str,
        options: Mapping[str, str] | None,
        what: str,
        *,
        overwrite: bool = False,
    ) -> StatementTarget:
        """The table at `path` (`TableNotFoundError` if none); `options` are write options."""
        given = {str(k): str(v) for k, v in (options or {}).items()}
        for option in STATEMENT_KEYS:
            if option.is_set(given):
                raise ConfigError(f"{what} decides {option.key} itself; leave it out of options")
        ctx = TableContext.open(path)
        ctx.check_writable()
        register(spark)
        return cls(spark, path, ctx, given, overwrite)

    def config(self, operation: str) -> WriteConfig:
        """The write settings of the statement's write (`operation`: upsert or delete)."""
        return resolve_write_config(self._write_options(operation), self.ctx.config)

    def snapshot(self, predicate: Expr | None = None) -> DataFrame:
        """The table's rows as of now, without Hudi's meta columns; the partitions `predicate`
        rules out (`clauses.partition_filters`) are not read."""
        filters = partition_filters(predicate, self._partition_types())
        df = read_frame(self.spark, self.path, filters=filters)
        return df.drop(*[c for c in META_FIELDS if c in df.columns])

    def _partition_types(self) -> dict[str, str]:
        """Partition fields by the kind of literal that can filter them (the reader prunes only
        where a folder value is the column value, and filters the rows read in any case)."""
        schema = table_arrow_schema(self.ctx)
        if schema is None:
            return {}
        types = {}
        for name in self.ctx.config.partition_fields:
            if name not in schema.names:
                continue
            arrow_type = schema.field(name).type
            if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
                types[name] = "string"
            elif pa.types.is_integer(arrow_type):
                types[name] = "integer"
        return types

    def schema(self, snapshot: DataFrame) -> T.StructType:
        """The table's data columns; a table without a commit has none to change."""
        if not snapshot.columns:
            raise UnsupportedOperationError(f"{self.path} has no commit yet: nothing to change")
        return snapshot.schema

    def write(self, rows: DataFrame, operation: str, *, delete_flags: bool) -> CommitResult:
        """Commit `rows` as one instant (and sync the catalog when the options ask)."""
        options = self._write_options(operation)
        result = client_write(rows, self.path, options, delete_flags=delete_flags)
        if sync_enabled(options):
            sync_to_catalog(self.spark, self.path, options)
        return result

    def _write_options(self, operation: str) -> dict[str, str]:
        options = {
            **self.options,
            write_keys.OPERATION.key: operation,
            # Keys are unique (checked), and a null ordering value is as Hudi's SQL writes allow.
            write_keys.COMBINE_BEFORE_UPSERT.key: "false",
            write_keys.COMBINE_BEFORE_DELETE.key: "false",
        }
        # Hudi 1.x (table version 8+) merges a statement's rows by the table's merge mode: under
        # event-time ordering a stale update loses, in MERGE and UPDATE alike (Hudi 1.2, checked).
        if operation == "upsert" and self.overwrite and self.ctx.config.version < 8:
            options[write_keys.PAYLOAD_CLASS.key] = OVERWRITE_WITH_LATEST
        return options
