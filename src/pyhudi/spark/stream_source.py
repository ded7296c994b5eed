"""Hudi tables as a Structured Streaming source: `spark.readStream.format("hudi").load(path)`.

A micro-batch reads the commits of an offset window (start, end] as the incremental query
(`hoodie.datasource.query.type=incremental` with begin/end instants) returns them: the latest
state of the records those commits wrote, or change-data-capture rows with
`hoodie.datasource.query.incremental.format=cdc`. Offsets name a point of the stream's order:

| table version | order of commits | offset `time`                                     |
|---------------|------------------|---------------------------------------------------|
| 6             | instant time     | an instant time; never past a pending commit (Hudi 0.15's `BLOCK`) |
| 8, 9          | completion time  | a completion time (Hudi 1.x's `HoodieStreamSourceV2`) |

An offset is the JSON object `{"version": 1, "order": "instant_time", "time": "<time>"}`
(`"000"`: before every commit). Spark checkpoints the offsets of each micro-batch before it runs,
and plans a replayed batch from the same offsets, so each commit is read exactly once by a query
whose sink is idempotent per batch id (`pyhudi.stream_write` is).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxFiles,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructField, StructType

from pyhudi.config import read as rkeys
from pyhudi.exceptions import ConfigError, UnsupportedOperationError
from pyhudi.file_group.slice_reader import read_slice_batches
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action, Instant
from pyhudi.reader.cdc import CDC_SCHEMA, is_cdc_query, plan_cdc, read_cdc_task
from pyhudi.reader.hollow import first_hollow_commit
from pyhudi.reader.planner import plan_read
from pyhudi.reader.slices import slice_tasks
from pyhudi.spark.errors import short_errors, short_errors_iter
from pyhudi.spark_compat import from_arrow_schema, to_arrow_schema
from pyhudi.table.context import TableContext
from pyhudi.timeline import normalize_instant_time

OFFSET_VERSION = 1
#: The offset before every commit (Hudi's `INIT_OFFSET`).
EARLIEST_TIME = "000"
#: Options a stream sets itself for each micro-batch: given by the user they would be overridden.
_WINDOW_KEYS = (rkeys.BEGIN_INSTANT, rkeys.END_INSTANT, rkeys.AS_OF_INSTANT)


class StreamOrder(str, Enum):
    """The order a stream reads commits in, and what its offsets' times are."""

    INSTANT_TIME = "instant_time"  # table version 6
    COMPLETION_TIME = "completion_time"  # table versions 8 and 9

    @classmethod
    def of(cls, ctx: TableContext) -> StreamOrder:
        return cls.COMPLETION_TIME if ctx.config.version >= 8 else cls.INSTANT_TIME

    def time_of(self, instant: Instant) -> str:
        if self is StreamOrder.COMPLETION_TIME:
            return instant.completion_time or instant.time
        return instant.time


@dataclass(frozen=True)
class StreamOffset:
    """A point of the stream: every commit at or before `time` (in `order`) has been read."""

    order: StreamOrder
    time: str

    def to_json(self) -> dict[str, Any]:
        return {"version": OFFSET_VERSION, "order": self.order.value, "time": self.time}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StreamOffset:
        if data.get("version") != OFFSET_VERSION:
            raise UnsupportedOperationError(
                f"unknown hudi stream offset {dict(data)}: written by a newer pyhudi?"
            )
        return cls(StreamOrder(data["order"]), str(data["time"]))


@dataclass(frozen=True)
class StreamSettings:
    """A stream's options, checked."""

    start: str  # earliest | latest | an instant time
    max_commits: int | None
    skip_compact: bool
    skip_cluster: bool
    hollow_policy: str
    cdc: bool

    @classmethod
    def of(cls, options: Mapping[str, str]) -> StreamSettings:
        """Raises `ConfigError` for a value a stream cannot use."""
        start = (rkeys.STREAMING_START_OFFSET.get(options) or "earliest").strip()
        if start.lower() in ("earliest", "latest"):
            start = start.lower()
        else:
            try:
                start = normalize_instant_time(start)
            except ValueError as err:
                raise ConfigError(
                    f"invalid {rkeys.STREAMING_START_OFFSET.key}={start!r}: expected earliest, "
                    f"latest or an instant time ({err})"
                ) from err
        max_commits = rkeys.STREAMING_MAX_COMMITS.get(options)
        if max_commits is not None and max_commits < 1:
            raise ConfigError(
                f"invalid {rkeys.STREAMING_MAX_COMMITS.key}={max_commits}: at least 1 commit"
            )
        cdc = is_cdc_query(options)
        if rkeys.INCREMENTAL_FORMAT.get(options) == "cdc" and not cdc:
            raise ConfigError(
                f"{rkeys.INCREMENTAL_FORMAT.key}=cdc needs {rkeys.QUERY_TYPE.key}=incremental "
                "(as Hudi's CDC queries and streams)"
            )
        return cls(
            start=start,
            max_commits=max_commits,
            skip_compact=rkeys.INCR_SKIP_COMPACT.get(options),
            skip_cluster=rkeys.INCR_SKIP_CLUSTER.get(options),
            hollow_policy=rkeys.HOLLOW_COMMIT_POLICY.get(options) or "BLOCK",
            cdc=cdc,
        )


def check_stream_options(options: Mapping[str, str]) -> None:
    """The values of the streaming keys, checked when the source is loaded."""
    StreamSettings.of(options)


# ---- the timeline as a stream -------------------------------------------------------------------
def ready_commits(ctx: TableContext, settings: StreamSettings) -> list[Instant]:
    """The completed commits a stream may read now, in stream order.

    Version 6 (instant-time order): a commit still pending while later ones completed (a
    "hollow" commit of concurrent writers) would complete behind an offset already past it, so
    nothing after it is ready until it completes or is rolled back (`BLOCK`, Hudi 0.15's streaming
    default), or the stream fails (`FAIL`). Versions 8/9 order by completion time: a commit that
    completes later comes later, whatever its instant time."""
    order = StreamOrder.of(ctx)
    commits = list(ctx.active.timeline.commits())
    if order is StreamOrder.COMPLETION_TIME:
        return sorted(commits, key=lambda i: (order.time_of(i), i.time))
    if settings.hollow_policy == "USE_TRANSITION_TIME":
        raise ConfigError(
            f"{rkeys.HOLLOW_COMMIT_POLICY.key}=USE_TRANSITION_TIME is not supported at table "
            "version 6 (pyhudi does not order commits by file modification time): use BLOCK"
        )
    hollow = first_hollow_commit(ctx)
    if hollow is None:
        return commits
    if settings.hollow_policy == "FAIL":
        raise ConfigError(
            f"found hollow commit {hollow.time} ({hollow.action.value}, {hollow.state.value}): "
            f"later instants completed before it. Set {rkeys.HOLLOW_COMMIT_POLICY.key}=BLOCK to "
            "wait for it"
        )
    return [c for c in commits if c.time < hollow.time]


def is_skipped(ctx: TableContext, instant: Instant, settings: StreamSettings) -> bool:
    """A compaction or clustering commit the stream skips (`...incr.skip_compact/_cluster`)."""
    if settings.skip_compact and ctx.config.is_merge_on_read and instant.action is Action.COMMIT:
        return True  # on merge-on-read tables a completed `commit` is a compaction (as Hudi)
    if settings.skip_cluster and instant.action is Action.REPLACE_COMMIT:
        metadata = ctx.active.commit_metadata(instant)
        return metadata.operation_type is WriteOperationType.CLUSTER
    return False


def next_end(
    ctx: TableContext,
    settings: StreamSettings,
    start: StreamOffset,
    max_commits: int | None,
    cap: StreamOffset | None = None,
) -> StreamOffset:
    """The end of the next window after `start`: every ready commit, at most `max_commits`
    (skipped ones not counted), never past `cap` (an `availableNow` target)."""
    order = StreamOrder.of(ctx)
    _check_order(start, order)
    end = start
    counted = 0
    for instant in ready_commits(ctx, settings):
        time = order.time_of(instant)
        if time <= start.time or (cap is not None and time > cap.time):
            continue
        skipped = is_skipped(ctx, instant, settings)
        if not skipped and max_commits is not None and counted == max_commits:
            break
        counted += 0 if skipped else 1
        end = StreamOffset(order, time)
    return end


def initial_offset(ctx: TableContext, settings: StreamSettings) -> StreamOffset:
    order = StreamOrder.of(ctx)
    if settings.start == "earliest":
        return StreamOffset(order, EARLIEST_TIME)
    if settings.start == "latest":
        return next_end(ctx, settings, StreamOffset(order, EARLIEST_TIME), None)
    return StreamOffset(order, settings.start)


def _check_order(offset: StreamOffset, order: StreamOrder) -> None:
    if offset.order is order or offset.time == EARLIEST_TIME:
        return
    raise UnsupportedOperationError(
        f"the stream's checkpoint has an offset by {offset.order.value} ({offset.time}), but the "
        f"table now orders commits by {order.value} (its version changed): start the stream "
        f"again with a new checkpoint location and {rkeys.STREAMING_START_OFFSET.key}"
    )


# ---- Spark's stream reader ----------------------------------------------------------------------
@dataclass
class StreamPartition(InputPartition):
    """One read task: a file slice of the incremental query, or a CDC task."""

    task: Any
    cdc: bool

    def __init__(self, task: Any, cdc: bool) -> None:
        super().__init__(None)
        self.task, self.cdc = task, cdc


class HudiStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The `hudi` format's stream reader (made by `HudiDataSource.streamReader`)."""

    def __init__(self, path: str, options: dict[str, str], schema: StructType) -> None:
        """Cheap: Spark makes and pickles one on every micro-batch's planning."""
        self.path, self.options, self.schema = path, options, schema
        self.settings = StreamSettings.of(options)
        given = [o.key for o in _WINDOW_KEYS if o.is_set(options)]
        if given:
            raise ConfigError(
                f"a stream reads each commit once from its start offset: remove {', '.join(given)} "
                f"(use {rkeys.STREAMING_START_OFFSET.key})"
            )
        self._target: StreamOffset | None = None

    def _ctx(self) -> TableContext:
        return TableContext.open(self.path)

    @short_errors
    def initialOffset(self) -> dict:
        return initial_offset(self._ctx(), self.settings).to_json()

    def getDefaultReadLimit(self) -> ReadLimit:
        """The commit limit (`hoodie.datasource.streaming.max.commits.per.batch`). Spark lets a
        Python source hand back only its built-in limits: the commit count rides on ReadMaxFiles."""
        if self.settings.max_commits is None:
            return ReadAllAvailable()
        return ReadMaxFiles(self.settings.max_commits)

    @short_errors
    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        max_commits = limit.max_files if isinstance(limit, ReadMaxFiles) else None
        ctx = self._ctx()
        end = next_end(ctx, self.settings, StreamOffset.from_json(start), max_commits, self._target)
        return end.to_json()

    @short_errors
    def prepareForTriggerAvailableNow(self) -> None:
        """`availableNow`: read the commits ready now, none that complete later."""
        ctx = self._ctx()
        earliest = StreamOffset(StreamOrder.of(ctx), EARLIEST_TIME)
        self._target = next_end(ctx, self.settings, earliest, None)

    @short_errors
    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        begin, last = StreamOffset.from_json(start), StreamOffset.from_json(end)
        if begin.time == last.time:
            return []
        ctx = self._ctx()
        _check_order(begin, StreamOrder.of(ctx))
        window = {
            rkeys.BEGIN_INSTANT.key: begin.time,
            rkeys.END_INSTANT.key: last.time,
            # the offsets already stop before a hollow commit (ready_commits)
            rkeys.HOLLOW_COMMIT_POLICY.key: "BLOCK",
        }
        if self.settings.cdc:
            changes = plan_cdc(ctx, {**self.options, **window})
            return [StreamPartition(task, True) for task in changes.tasks]
        query = {**self.options, rkeys.QUERY_TYPE.key: "incremental", **window}
        plan = plan_read(ctx, query)
        skipped = _skipped_times(ctx, self.settings, plan.commit_times or frozenset())
        if skipped:
            plan = replace(plan, commit_times=(plan.commit_times or frozenset()) - skipped)
        return [StreamPartition(task, False) for task in slice_tasks(ctx, plan)]

    @short_errors_iter
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        target = to_arrow_schema(_plain_fields(self.schema))
        task = partition.task  # type: ignore[attr-defined]
        if partition.cdc:  # type: ignore[attr-defined]
            for batch in read_cdc_task(task):
                yield from pa.Table.from_batches([batch]).cast(target).to_batches()
            return
        yield from read_slice_batches(task, target)

    def commit(self, end: dict) -> None:
        """Nothing to release: the table keeps no reader state."""


def _skipped_times(
    ctx: TableContext, settings: StreamSettings, times: frozenset[str]
) -> frozenset[str]:
    if not (settings.skip_compact or settings.skip_cluster):
        return frozenset()
    return frozenset(
        i.time
        for i in ctx.active.timeline.commits()
        if i.time in times and is_skipped(ctx, i, settings)
    )


def _plain_fields(schema: StructType) -> StructType:
    return StructType([StructField(f.name, f.dataType, f.nullable) for f in schema.fields])


def cdc_spark_schema() -> StructType:
    """The Spark schema of change-data-capture rows (`op`, `ts_ms`, `before`, `after`)."""
    return from_arrow_schema(CDC_SCHEMA)
