"""`df.write.format("hudi")` and `df.writeStream.format("hudi")` routed to `pyhudi.write` and
`pyhudi.stream_write`, and Hudi's SQL in `spark.sql` to `pyhudi.sql`, in the user's own process.

Spark's Python Data Source API cannot run Spark jobs inside a write (no index lookup, no shuffle),
so Hudi's default operation (`upsert`) and most others cannot run as a data source. Once
`pyhudi.register(spark)` has run, the writers of a registered session record what a program
tells them (format, options, save or output mode, partition columns, trigger, query name), and
`save()` of the formats `hudi` and `org.apache.hudi` runs what the data source cannot (an index
lookup or a shuffle: Hudi's default `upsert`, `delete`, ...; the save modes `errorifexists` and
`ignore`; `partitionBy`) with the same code as `pyhudi.write`, and the rest in the data source as before;
`start()` always runs `pyhudi.stream_write` (the data source has no stream writer). Every other
format goes to Spark as before. This is done
by wrapping the methods of PySpark's writer classes (classic and Connect) once per process; a
session that was not registered is untouched (its `format("hudi")` is the plain data source).
Likewise `spark.sql` of a registered session hands `MERGE INTO`, `UPDATE`, `DELETE FROM`, `CALL`
and queries naming ``hudi.`path` `` or reading `TIMESTAMP AS OF` to `pyhudi.sql`, which runs
Hudi's statements and gives Spark the rest.

pyspark 3.5 has no Python Data Source API: there every `hudi` save runs `pyhudi.write`, and
`spark.read.format("hudi").load(path)` runs `pyhudi.read` with the reader's options
(`spark.readStream.format("hudi")` says it needs pyspark 4). On 4.x, loads of part of a table
(a glob path, `hoodie.datasource.read.paths`) run `pyhudi.read` too.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession

from pyhudi.client.write_client import write
from pyhudi.config import write as write_keys
from pyhudi.config.read import READ_PATHS
from pyhudi.dml.sql import in_statement, run_sql
from pyhudi.exceptions import ConfigError, UnsupportedOperationError
from pyhudi.reader.dataframe import read
from pyhudi.reader.read_paths import is_glob
from pyhudi.spark.datasource import is_registered
from pyhudi.spark.datasource import register as register_source
from pyhudi.spark.source_operations import runs_as_data_source
from pyhudi.spark.streaming import stream_write
from pyhudi.spark_compat import has_python_data_sources, needs_pyspark_4

#: The names Hudi's Spark data source answers to.
HUDI_FORMATS = frozenset({"hudi", "org.apache.hudi"})
#: Spark's save mode when a program sets none.
DEFAULT_SAVE_MODE = "errorifexists"
#: The save modes Spark's Python Data Source API takes.
DATA_SOURCE_MODES = ("append", "overwrite")
_STATE = "_pyhudi_recorded"
_SOURCE = "_pyhudi_source_frame"
_installed = False


@dataclass
class Recorded:
    """What a program told one writer."""

    format: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    mode: str | None = None
    partition_by: list[str] = field(default_factory=list)
    trigger: dict[str, Any] = field(default_factory=dict)
    query_name: str | None = None


def option_text(value: Any) -> str:
    """An option value as Spark passes it on: booleans in lower case."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def recorded(writer: Any) -> Recorded:
    state = writer.__dict__.get(_STATE)
    if state is None:
        state = Recorded()
        writer.__dict__[_STATE] = state
    return state


def _columns(cols: tuple[Any, ...]) -> list[str]:
    if len(cols) == 1 and isinstance(cols[0], list | tuple):
        cols = tuple(cols[0])
    return [str(c) for c in cols]


def _recording(original: Callable[..., Any], note: Callable[..., None]) -> Callable[..., Any]:
    @functools.wraps(original)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        note(recorded(self), *args, **kwargs)
        return original(self, *args, **kwargs)

    return method


def _note_format(state: Recorded, source: str) -> None:
    state.format = source


def _note_option(state: Recorded, key: str, value: Any) -> None:
    if value is not None:
        state.options[str(key)] = option_text(value)


def _note_options(state: Recorded, **options: Any) -> None:
    for key, value in options.items():
        _note_option(state, key, value)


def _note_mode(state: Recorded, mode: str | None) -> None:
    if mode is not None:
        state.mode = str(mode)


def _note_partition_by(state: Recorded, *cols: Any) -> None:
    state.partition_by = _columns(cols)


def _note_trigger(state: Recorded, **kwargs: Any) -> None:
    state.trigger = {k: v for k, v in kwargs.items() if v is not None}


def _note_query_name(state: Recorded, name: str) -> None:
    state.query_name = name


_NOTES: dict[str, Callable[..., None]] = {
    "format": _note_format,
    "option": _note_option,
    "options": _note_options,
    "mode": _note_mode,
    "outputMode": _note_mode,
    "partitionBy": _note_partition_by,
    "trigger": _note_trigger,
    "queryName": _note_query_name,
}


def _is_hudi(source: str | None) -> bool:
    return source is not None and source.lower() in HUDI_FORMATS


def _routed(writer: Any) -> bool:
    """The writer's session is registered with pyhudi (its frame was noted on the way)."""
    frame = writer.__dict__.get(_SOURCE)
    return frame is not None and is_registered(frame.sparkSession)


def _write_options(state: Recorded, extra: dict[str, Any]) -> dict[str, str]:
    options = {**state.options, **{k: option_text(v) for k, v in extra.items() if v is not None}}
    field_key = write_keys.PARTITION_PATH_FIELD
    if state.partition_by:
        given = field_key.raw(options)
        wanted = ",".join(state.partition_by)
        if given is not None and given.replace(" ", "") != wanted:
            raise ConfigError(
                f"partitionBy({', '.join(state.partition_by)}) and {field_key.key}={given} "
                "name different partition fields; give one of them"
            )
        options[field_key.key] = wanted
    return options


def _save(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def save(
        self: Any,
        path: str | None = None,
        format: str | None = None,
        mode: str | None = None,
        partitionBy: Any = None,
        **options: Any,
    ) -> None:
        state = recorded(self)
        if not _is_hudi(format or state.format) or not _routed(self):
            return original(self, path, format, mode, partitionBy, **options)  # type: ignore[no-any-return]
        if partitionBy is not None:
            _note_partition_by(state, partitionBy)
        given = _write_options(state, options)
        target = path or given.pop("path", None)
        given.pop("path", None)
        save_mode = (mode or state.mode or DEFAULT_SAVE_MODE).lower()
        if (
            target
            and has_python_data_sources()
            and save_mode in DATA_SOURCE_MODES
            and not state.partition_by  # Spark checks a data source's partitioning against none
            and runs_as_data_source(target, given, save_mode == "overwrite")
        ):
            return original(self, path, format, mode, partitionBy, **options)  # type: ignore[no-any-return]
        if not target:
            raise ConfigError('format("hudi").save() needs the table\'s path')
        write(self.__dict__[_SOURCE], target, given, mode=save_mode)
        return None

    return save


def _start(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def start(
        self: Any,
        path: str | None = None,
        format: str | None = None,
        outputMode: str | None = None,
        partitionBy: Any = None,
        queryName: str | None = None,
        **options: Any,
    ) -> Any:
        state = recorded(self)
        if not _is_hudi(format or state.format) or not _routed(self):
            return original(self, path, format, outputMode, partitionBy, queryName, **options)
        if partitionBy is not None:
            _note_partition_by(state, partitionBy)
        given = _write_options(state, options)
        target = path or given.pop("path", None)
        given.pop("path", None)
        output_mode = (outputMode or state.mode or "append").lower()
        if output_mode != "append":
            raise ConfigError(
                f"a Hudi table takes a stream in output mode append; got {output_mode!r}"
            )
        frame = self.__dict__[_SOURCE]
        name = queryName or state.query_name
        checkpoint = given.pop("checkpointLocation", None) or _session_checkpoint(frame, name)
        if not target or not checkpoint:
            raise ConfigError(
                'writeStream.format("hudi") needs the table\'s path and a checkpointLocation '
                "option (or spark.sql.streaming.checkpointLocation and a query name)"
            )
        return stream_write(
            frame,
            target,
            given,
            checkpoint_location=checkpoint,
            trigger=state.trigger or None,
            query_name=name,
        )

    return start


def _reader_session(reader: Any) -> Any:
    """The session of a `spark.read` / `spark.readStream` (classic: `_spark`, Connect: `_client`)."""
    return getattr(reader, "_spark", None) or getattr(reader, "_client", None)


def _routed_reader(reader: Any, source: str | None) -> bool:
    session = _reader_session(reader)
    return _is_hudi(source) and session is not None and is_registered(session)


def _load(original: Callable[..., Any]) -> Callable[..., Any]:
    """`spark.read.format("hudi").load(path)` as `pyhudi.read` with the reader's options: every
    load on pyspark 3.5 (no Python data source), and on 4.x the loads of part of a table (a glob
    path, `hoodie.datasource.read.paths`), which the data source, reading whole tables, cannot."""

    @functools.wraps(original)
    def load(
        self: Any, path: Any = None, format: str | None = None, schema: Any = None, **options: Any
    ) -> Any:
        state = recorded(self)
        if not _routed_reader(self, format or state.format):
            return original(self, path, format, schema, **options)
        given = {
            **state.options,
            **{k: option_text(v) for k, v in options.items() if v is not None},
        }
        target = path or given.get("path")
        partial = READ_PATHS.key in given or (isinstance(target, str) and is_glob(target))
        if has_python_data_sources() and not partial:  # the data source reads whole tables
            return original(self, path, format, schema, **options)
        given.pop("path", None)
        if partial and not target:
            target = ""
        elif not isinstance(target, str) or not target:
            raise ConfigError('format("hudi").load() needs one table path')
        return read(_reader_session(self), target, given)

    return load


def _stream_load(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def load(
        self: Any, path: str | None = None, format: str | None = None, schema: Any = None, **kw: Any
    ) -> Any:
        if not has_python_data_sources() and _routed_reader(self, format or recorded(self).format):
            raise UnsupportedOperationError(needs_pyspark_4('spark.readStream.format("hudi")'))
        return original(self, path, format, schema, **kw)

    return load


#: The first words of the statements `spark.sql` hands to `pyhudi.sql`, besides queries that name
#: ``hudi.`path` `` or travel in time.
_STATEMENT_WORDS = ("MERGE", "UPDATE", "DELETE", "CALL")
_COMMENT = re.compile(r"(--[^\n]*\n|/\*.*?\*/|\s|\()+", re.S)


def hands_to_pyhudi(statement: str) -> bool:
    """A cheap look at a statement: may `pyhudi.sql` have to run it?"""
    text = _COMMENT.sub(" ", statement).strip()
    first = text.split(" ", 1)[0].upper()
    lowered = text.lower()
    return (
        first in _STATEMENT_WORDS
        or lowered.startswith("show partitions ")
        or (first == "CREATE" and (" using hudi" in lowered or " using org.apache.hudi" in lowered))
        or lowered.startswith("drop table ")
        or lowered.startswith("alter table ")
        or first == "INSERT"
        or "hudi.`" in lowered
        or " as of " in lowered
    )


def _sql(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def sql(self: Any, sqlQuery: str, args: Any = None, **kwargs: Any) -> Any:
        if (
            args is not None
            or kwargs
            or in_statement()
            or not is_registered(self)
            or not hands_to_pyhudi(sqlQuery)
        ):
            return original(self, sqlQuery, args, **kwargs)
        return run_sql(self, sqlQuery)

    return sql


def _session_checkpoint(frame: Any, name: str | None) -> str | None:
    root = frame.sparkSession.conf.get("spark.sql.streaming.checkpointLocation", None)
    return os.path.join(root, name) if root and name else None


def _noting_frame(original: property) -> property:
    """`DataFrame.write` / `.writeStream`: the writer remembers the frame it writes."""

    def getter(frame: Any) -> Any:
        writer = original.fget(frame)  # type: ignore[misc]
        writer.__dict__[_SOURCE] = frame
        return writer

    return property(getter, doc=original.__doc__)


def _wrap_writer(cls: type, terminal: str, wrap: Callable[..., Any]) -> None:
    for name, note in _NOTES.items():
        original = cls.__dict__.get(name)
        if original is not None:
            setattr(cls, name, _recording(original, note))
    setattr(cls, terminal, wrap(cls.__dict__[terminal]))


def register(spark: SparkSession) -> None:
    """`pyhudi.register(spark)`: the `hudi` format on this session, and its writers and SQL
    routed (idempotent)."""
    register_source(spark)
    install()


def install() -> None:
    """Wrap PySpark's writers, once per process (classic, and Connect where installed)."""
    global _installed
    if _installed:
        return
    from pyspark.sql.readwriter import DataFrameWriter
    from pyspark.sql.streaming.readwriter import DataStreamWriter

    try:  # pyspark 4: the classic DataFrame is its own class
        from pyspark.sql.classic.dataframe import DataFrame
    except ImportError:  # pyspark 3.5
        from pyspark.sql.dataframe import DataFrame  # type: ignore[assignment]
    pairs: list[tuple[type, type, type]] = [(DataFrame, DataFrameWriter, DataStreamWriter)]
    try:
        from pyspark.sql.connect.dataframe import DataFrame as ConnectFrame
        from pyspark.sql.connect.readwriter import DataFrameWriter as ConnectWriter
        from pyspark.sql.connect.streaming.readwriter import DataStreamWriter as ConnectStream
    except ImportError:  # Spark Connect's client extras are not installed
        pass
    else:
        pairs.append((ConnectFrame, ConnectWriter, ConnectStream))
    sessions: list[type] = [SparkSession]
    try:
        from pyspark.sql.connect.session import SparkSession as ConnectSession
    except ImportError:
        pass
    else:
        sessions.append(ConnectSession)
    for session_cls in sessions:
        session_cls.sql = _sql(session_cls.__dict__["sql"])  # type: ignore[attr-defined]
    for frame_cls, writer_cls, stream_cls in pairs:
        _wrap_writer(writer_cls, "save", _save)
        _wrap_writer(stream_cls, "start", _start)
        for attribute in ("write", "writeStream"):
            setattr(frame_cls, attribute, _noting_frame(frame_cls.__dict__[attribute]))
    _install_readers()
    _installed = True


def _install_readers() -> None:
    from pyspark.sql.readwriter import DataFrameReader
    from pyspark.sql.streaming.readwriter import DataStreamReader

    pairs: list[tuple[type, type]] = [(DataFrameReader, DataStreamReader)]
    try:
        from pyspark.sql.connect.readwriter import DataFrameReader as ConnectReader
        from pyspark.sql.connect.streaming.readwriter import DataStreamReader as ConnectStream
    except ImportError:  # Spark Connect's client extras are not installed
        pass
    else:
        pairs.append((ConnectReader, ConnectStream))
    for reader_cls, stream_cls in pairs:
        _wrap_writer(reader_cls, "load", _load)
        _wrap_writer(stream_cls, "load", _stream_load)
