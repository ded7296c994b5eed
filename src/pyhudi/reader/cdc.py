"""Change-data-capture queries (`hoodie.datasource.query.incremental.format=cdc`), Spark-free.

Each completed data-changing commit of the incremental window (`begin`, `end`] is turned into the
changes of every file group it touched, as Apache Hudi's CDC query does (`HoodieCDCExtractor`):

| what the commit left for the file group                | rows                                                 |
|---------------------------------------------------------|------------------------------------------------------|
| CDC log files (`cdcStats`)                              | as logged; images the mode leaves out are looked up in the base files before / after |
| a new base file, inserts only                           | every record `i`                                     |
| a delete that emptied the file group                    | every record of the previous base file `d`           |
| a merge-on-read log file                                | the file slice before it, and with the log file's records merged over it, compared by key |
| a replace commit (insert_overwrite, delete_partition)   | every record of the replaced file group `d`          |

A row is `op` (`i`/`u`/`d`), `ts_ms` (the commit's instant time), `before` and `after` (the record
as JSON, null when absent). Images from CDC logs hold the data columns (Hudi logs them without
meta fields); images read from data files hold the meta fields too, as Hudi returns them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from pyhudi.codec.file_names import parse_base_file
from pyhudi.codec.log.avro_content import decode_avro_records
from pyhudi.codec.log.cdc_columnar import decode_cdc_block
from pyhudi.codec.log.reader import iter_blocks
from pyhudi.codec.schema import META_FIELDS, RECORD_KEY
from pyhudi.config import read as rkeys
from pyhudi.config.unknown import check_read_options
from pyhudi.exceptions import ConfigError, CorruptFileError, UnsupportedOperationError
from pyhudi.file_group.base_formats import read_base_file
from pyhudi.file_group.log_merge import slice_winners
from pyhudi.file_group.slice_reader import read_slice
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.merge.config import MergeMode
from pyhudi.merge.record_merger import merge_with_base
from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import HeaderMetadataType, LogBlockType, WriteOperationType
from pyhudi.model.file import FileGroup, FileSlice
from pyhudi.model.instant import Action, Instant
from pyhudi.reader.cdc_json import json_record, json_rows
from pyhudi.reader.planner import incremental_plan_base, incremental_window
from pyhudi.reader.slices import slice_tasks
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext

#: The columns of a CDC query (Hudi's `CDCRelation`): images are JSON text.
CDC_SCHEMA = pa.schema(
    [
        pa.field("op", pa.string()),
        pa.field("ts_ms", pa.string()),
        pa.field("before", pa.string()),
        pa.field("after", pa.string()),
    ]
)
CDC_ENABLED_KEY = "hoodie.table.cdc.enabled"
MODE_KEY = "hoodie.table.cdc.supplemental.logging.mode"
OP_KEY_ONLY, DATA_BEFORE, DATA_BEFORE_AFTER = "OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"
#: Hudi 0.13's names of the modes, which later releases still read.
_LEGACY_MODES = {
    "OP_KEY": OP_KEY_ONLY,
    "CDC_DATA_BEFORE": DATA_BEFORE,
    "CDC_DATA_BEFORE_AFTER": DATA_BEFORE_AFTER,
}
#: `WriteOperationType.isDataChange`: the operations whose commits a CDC query reports (Hudi 0.15,
#: asked: the prepared upserts and deletes of Hudi's SQL MERGE, UPDATE and DELETE too, not
#: prepared inserts; Hudi 1.2 reports a SQL DELETE's `DELETE_PREPPED` commit alike).
DATA_CHANGES = frozenset(
    {
        WriteOperationType.INSERT,
        WriteOperationType.UPSERT,
        WriteOperationType.UPSERT_PREPPED,
        WriteOperationType.DELETE,
        WriteOperationType.DELETE_PREPPED,
        WriteOperationType.BULK_INSERT,
        WriteOperationType.DELETE_PARTITION,
        WriteOperationType.INSERT_OVERWRITE,
        WriteOperationType.INSERT_OVERWRITE_TABLE,
        WriteOperationType.BOOTSTRAP,
    }
)

AS_IS, BASE_FILE_INSERT, BASE_FILE_DELETE = "AS_IS", "BASE_FILE_INSERT", "BASE_FILE_DELETE"
LOG_FILE, REPLACE_COMMIT = "LOG_FILE", "REPLACE_COMMIT"


@dataclass(frozen=True)
class CdcChange:
    """What one commit changed in one file group, and where to read it from."""

    instant: str
    kind: str
    cdc_files: tuple[str, ...] = ()  # relative paths (AS_IS)
    #: The file group's base file written by the commit (BASE_FILE_INSERT; AS_IS after-images).
    base_file: str | None = None
    #: The file slice before the change (deletes, replaced groups, log files, before-images).
    before: SliceTask | None = None
    #: The file slice after the change (LOG_FILE).
    after: SliceTask | None = None
    #: The log file the commit wrote (LOG_FILE), relative path.
    log_file: str | None = None


@dataclass(frozen=True)
class CdcTask:
    """The changes of one file group over the window, oldest first (one Spark task)."""

    storage: Storage
    base_path: str
    partition_path: str
    file_id: str
    mode: str
    changes: tuple[CdcChange, ...]
    #: Slices read record by record print their null fields (`null`), as Hudi 0.15 prints them:
    #: its CDC query keeps the records of a log file's slice and an OP_KEY_ONLY before-image as
    #: Avro records (`toString`); Hudi 1.2 prints every record read from data files with Jackson,
    #: which leaves null fields out (table version 8 and later).
    avro_slices: bool = False

    def path(self, relative: str) -> str:
        return f"{self.base_path}/{relative}"


@dataclass(frozen=True)
class CdcPlan:
    """The file groups a CDC query reads, one task each."""

    tasks: tuple[CdcTask, ...]
    schema: pa.Schema = CDC_SCHEMA


def is_cdc_query(options: Mapping[str, str]) -> bool:
    """True for `query.type=incremental` with `incremental.format=cdc`."""
    return (
        rkeys.QUERY_TYPE.get(options) == "incremental"
        and rkeys.INCREMENTAL_FORMAT.get(options) == "cdc"
    )


def logging_mode(ctx: TableContext) -> str:
    """The table's `hoodie.table.cdc.supplemental.logging.mode` (default DATA_BEFORE_AFTER)."""
    value = (ctx.config.get(MODE_KEY) or DATA_BEFORE_AFTER).strip().upper()
    value = _LEGACY_MODES.get(value, value)
    if value not in (OP_KEY_ONLY, DATA_BEFORE, DATA_BEFORE_AFTER):
        raise CorruptFileError(f"hoodie.properties: unknown {MODE_KEY}={value}")
    return value


def plan_cdc(ctx: TableContext, options: Mapping[str, str]) -> CdcPlan:
    """The CDC tasks of the incremental window the options give (see the module doc)."""
    opts = dict(options)
    check_read_options(opts)  # misspelt keys are never ignored
    if (ctx.config.get(CDC_ENABLED_KEY) or "false").strip().lower() != "true":
        raise ConfigError(
            f"{ctx.base_path} is not a CDC table (hoodie.table.cdc.enabled is off): it has no "
            "change feed, as Hudi says ('It isn't a CDC hudi table'). Create the table with "
            "hoodie.table.cdc.enabled=true, or read it incrementally (latest_state)"
        )
    if not ctx.config.populate_meta_fields:
        raise UnsupportedOperationError(
            "CDC queries are not supported when meta fields are disabled "
            "(the table has hoodie.populate.meta.fields=false)"
        )
    window = [
        i
        for i in incremental_window(ctx, opts)
        if i.action in (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)
    ]
    planner = _Planner(ctx, logging_mode(ctx))
    for instant in window:
        metadata = ctx.active.commit_metadata(instant)
        if metadata.operation_type in DATA_CHANGES:
            planner.add_commit(instant, metadata)
    return CdcPlan(tasks=planner.tasks())


class _Planner:
    def __init__(self, ctx: TableContext, mode: str) -> None:
        self.ctx, self.mode = ctx, mode
        self.changes: dict[tuple[str, str], list[CdcChange]] = {}
        self.view = ctx.view()
        self.plan = incremental_plan_base(ctx)
        self.completed = list(ctx.active.timeline.commits())
        self._groups_memo: dict[tuple[str | None, str], dict[str, FileGroup]] = {}
        self._slices_memo: dict[tuple[str | None, str], dict[str, FileSlice]] = {}

    def tasks(self) -> tuple[CdcTask, ...]:
        return tuple(
            CdcTask(
                self.ctx.storage,
                self.ctx.base_path,
                partition,
                file_id,
                self.mode,
                tuple(sorted(changes, key=lambda c: c.instant)),
                avro_slices=self.ctx.config.version < 8,
            )
            for (partition, file_id), changes in sorted(self.changes.items())
        )

    def _add(self, partition: str, file_id: str, change: CdcChange) -> None:
        self.changes.setdefault((partition, file_id), []).append(change)

    def add_commit(self, instant: Instant, metadata: CommitMetadata) -> None:
        for partition, stats in metadata.partition_to_write_stats.items():
            for stat in stats:
                self._add(partition, stat.file_id, self._change(instant, partition, stat, metadata))
        for partition, file_ids in (metadata.partition_to_replace_file_ids or {}).items():
            for file_id in file_ids:
                before = self._slice_before(instant, partition, file_id)
                if before is not None:
                    self._add(
                        partition, file_id, CdcChange(instant.time, REPLACE_COMMIT, before=before)
                    )

    def _change(
        self, instant: Instant, partition: str, stat: WriteStat, metadata: CommitMetadata
    ) -> CdcChange:
        time = instant.time
        path = stat.path or ""
        if stat.cdc_stats:
            files = tuple(sorted(stat.cdc_stats))
            if self.mode == DATA_BEFORE_AFTER:
                return CdcChange(time, AS_IS, files)
            before = None
            if self.mode == OP_KEY_ONLY:
                before = self._base_file_slice(partition, stat.file_id, stat.prev_commit)
            return CdcChange(time, AS_IS, files, base_file=path, before=before)
        name = path.rsplit("/", 1)[-1]
        if parse_base_file(partition, name) is not None:
            operation = metadata.operation_type
            if operation is WriteOperationType.DELETE and stat.num_writes == 0 and stat.num_deletes:
                before = self._base_file_slice(partition, stat.file_id, stat.prev_commit)
                if before is None:
                    raise CorruptFileError(
                        f"CDC: no base file of {partition}/{stat.file_id} at {stat.prev_commit}, "
                        f"which delete {time} emptied"
                    )
                return CdcChange(time, BASE_FILE_DELETE, before=before)
            if (
                stat.num_update_writes == 0
                and stat.num_deletes == 0
                and stat.num_writes == stat.num_inserts
            ):
                return CdcChange(time, BASE_FILE_INSERT, base_file=path)
            raise CorruptFileError(
                f"CDC query: commit {time} rewrote {path} without a CDC log, so its changes "
                "cannot be told (Hudi: 'There should be a cdc log file')"
            )
        before = self._slice_before(instant, partition, stat.file_id)
        after = self._slice_at(instant, partition, stat.file_id)
        if after is None:
            raise CorruptFileError(f"CDC: no file slice of {partition}/{stat.file_id} at {time}")
        if before is None:  # the log file opened the file group
            before = replace(after, base_file=None, log_files=(), visible_instants=frozenset())
        return CdcChange(time, LOG_FILE, before=before, after=after, log_file=path or None)

    # ---- slices -------------------------------------------------------------------------------
    def _task(self, file_slice: FileSlice, as_of: str) -> SliceTask:
        """The slice read as the table stood at `as_of` (commits after it invisible)."""
        (task,) = slice_tasks(self.ctx, self.plan, [file_slice])
        visible = frozenset(i.time for i in self.completed if i.time <= as_of)
        return replace(task, visible_instants=visible, as_of=as_of, commit_times=None)

    def _groups(self, as_of: str | None, partition: str) -> dict[str, FileGroup]:
        """Every file group of `partition` as of `as_of`, replaced groups included (memoised: a
        commit touches many groups of one partition)."""
        key = (as_of, partition)
        if key not in self._groups_memo:
            groups = self.view.file_groups(as_of, [partition], include_replaced=True)
            self._groups_memo[key] = {g.file_id: g for g in groups}
        return self._groups_memo[key]

    def _latest(self, as_of: str | None, partition: str) -> dict[str, FileSlice]:
        """The latest slice of each file group as of `as_of`: merged across a pending
        compaction, as a snapshot reads it; a replaced group's last slice."""
        key = (as_of, partition)
        if key not in self._slices_memo:
            slices = {f: g.slices[0] for f, g in self._groups(as_of, partition).items() if g.slices}
            for merged in self.view.latest_merged_file_slices(as_of, [partition]):
                slices[merged.file_id] = merged
            self._slices_memo[key] = slices
        return self._slices_memo[key]

    def _slice_as_of(self, as_of: str, partition: str, file_id: str) -> SliceTask | None:
        file_slice = self._latest(as_of, partition).get(file_id)
        return self._task(file_slice, as_of) if file_slice is not None else None

    def _slice_at(self, instant: Instant, partition: str, file_id: str) -> SliceTask | None:
        return self._slice_as_of(instant.time, partition, file_id)

    def _slice_before(self, instant: Instant, partition: str, file_id: str) -> SliceTask | None:
        return self._slice_as_of(_just_before(instant.time), partition, file_id)

    def _base_file_slice(self, partition: str, file_id: str, commit: str) -> SliceTask | None:
        """The file group's base file written by `commit`, as a slice of its own."""
        group = self._groups(commit, partition).get(file_id)
        for file_slice in group.slices if group is not None else ():
            base = file_slice.base_file
            if base is not None and base.instant_time == commit:
                return self._task(FileSlice(partition, file_id, base.instant_time, base), commit)
        return None


def _just_before(time: str) -> str:
    """The greatest instant time of the same length below `time` (instant times are digits)."""
    digits = time[:17] if len(time) >= 17 else time
    return str(int(digits) - 1).rjust(len(digits), "0")


# ---- reading ----------------------------------------------------------------------------------


def read_cdc_task(task: CdcTask, max_rows: int = 65536) -> Iterator[pa.RecordBatch]:
    """The CDC rows of one file group, change by change, as batches of `CDC_SCHEMA`."""
    for change in task.changes:
        table = _rows(task, change)
        if table.num_rows:
            yield from table.to_batches(max_chunksize=max_rows)


def read_cdc_arrow(ctx: TableContext, options: Mapping[str, str]) -> pa.Table:
    """A CDC query as one Arrow table (`pyhudi.read_arrow`)."""
    plan = plan_cdc(ctx, options)
    batches = [b for task in plan.tasks for b in read_cdc_task(task)]
    return pa.Table.from_batches(batches, schema=CDC_SCHEMA)


def _rows(task: CdcTask, change: CdcChange) -> pa.Table:
    if change.kind == BASE_FILE_INSERT:
        assert change.base_file is not None
        after = read_base_file(task.storage, task.path(change.base_file))
        return _table("i", change.instant, None, _json_rows(after))
    if change.kind in (BASE_FILE_DELETE, REPLACE_COMMIT):
        assert change.before is not None
        return _table("d", change.instant, _json_rows(read_slice(change.before)), None)
    if change.kind == LOG_FILE:
        assert change.before is not None and change.after is not None
        before = read_slice(change.before)
        after = _log_file_over(change, before)
        return _diff(change.instant, before, after, skip_nulls=not task.avro_slices)
    return _logged(task, change)


def _log_file_over(change: CdcChange, before: pa.Table) -> pa.Table:
    """The slice before a log file with that file's records merged over it, as Hudi's CDC query
    tells a log file's changes (Hudi 0.15 `HoodieCDCRDD.loadNextLogRecord`, Hudi 1.2 alike): the
    file's records, resolved alone, merge over their key's record before them as over a base
    record, and a delete removes it whatever the ordering values. So a change can differ from
    what the snapshots show: the snapshot's log scan also weighs the earlier log records of the
    key (a stale delete after a newer log update deletes in the change feed only)."""
    assert change.after is not None
    if change.log_file is None:  # a write stat without a path: the slices compared
        return read_slice(change.after)
    task = replace(
        change.after, base_file=None, bootstrap_source=None, log_files=(change.log_file,)
    )
    mode = MergeMode(task.merge_mode)
    return merge_with_base(before, slice_winners(task), mode, task.ordering_field)


def _table(op: str | list[str], instant: str, before: Any, after: Any) -> pa.Table:
    n = len(before if before is not None else after)
    ops = [op] * n if isinstance(op, str) else op
    return pa.table(
        {
            "op": pa.array(ops, pa.string()),
            "ts_ms": pa.array([instant] * n, pa.string()),
            "before": pa.array(before if before is not None else [None] * n, pa.string()),
            "after": pa.array(after if after is not None else [None] * n, pa.string()),
        },
        schema=CDC_SCHEMA,
    )


def _diff(instant: str, before: pa.Table, after: pa.Table, *, skip_nulls: bool) -> pa.Table:
    """A log file's changes: keys it added (`i`), removed (`d`) or whose merged record changed
    (`u`): `before` and `after` (`_log_file_over`) compared by key."""
    old, new = _images_by_key(before, skip_nulls), _images_by_key(after, skip_nulls)
    rows: list[tuple[str, str | None, str | None]] = []
    for key, image in new.items():
        previous = old.get(key)
        if previous is None:
            rows.append(("i", None, image))
        elif previous != image:
            rows.append(("u", previous, image))
    rows.extend(("d", image, None) for key, image in old.items() if key not in new)
    ops = [r[0] for r in rows]
    befores = [r[1] for r in rows]
    afters = [r[2] for r in rows]
    return _table(ops, instant, befores, afters)


def _cdc_blocks(task: CdcTask, change: CdcChange) -> Iterator[tuple[bytes, str]]:
    """(content, schema) of every CDC block of the commit's CDC logs."""
    for relative in change.cdc_files:
        with task.storage.open_input(task.path(relative)) as handle:
            for block in iter_blocks(handle, read_content=True):
                if block.block_type is not LogBlockType.CDC_DATA_BLOCK:
                    continue
                schema = block.header.get(HeaderMetadataType.SCHEMA)
                if schema is None:
                    raise CorruptFileError(f"CDC block without a SCHEMA header in {relative}")
                yield block.content, schema


def _logged(task: CdcTask, change: CdcChange) -> pa.Table:
    """AS_IS: the rows of the commit's CDC logs, images completed from base files by mode."""
    if task.mode == DATA_BEFORE_AFTER:
        parts = [_logged_images(change.instant, c, s) for c, s in _cdc_blocks(task, change)]
        return pa.concat_tables(parts) if parts else CDC_SCHEMA.empty_table()
    records: list[dict[str, Any]] = []
    for content, schema in _cdc_blocks(task, change):
        records.extend(decode_avro_records(content, schema))
    ops = [str(r.get("op")) for r in records]
    keys = [str(r.get("record_key")) for r in records]
    after_images = (
        _images_by_key(read_base_file(task.storage, task.path(change.base_file)))
        if change.base_file
        else {}
    )
    afters = [after_images.get(k) if op != "d" else None for k, op in zip(keys, ops, strict=True)]
    if task.mode == DATA_BEFORE:
        befores = [_logged_image(r.get("before")) for r in records]
    else:
        old = (
            _images_by_key(read_slice(change.before), skip_nulls=not task.avro_slices)
            if change.before is not None
            else {}
        )
        befores = [old.get(k) if op != "i" else None for k, op in zip(keys, ops, strict=True)]
    return _table(ops, change.instant, befores, afters)


def _logged_images(instant: str, content: bytes, schema: str) -> pa.Table:
    """A DATA_BEFORE_AFTER block's rows: decoded column by column when the codec handles its
    schema, else record by record (the same text either way)."""
    table = decode_cdc_block(content, schema)
    if table is None:
        records = decode_avro_records(content, schema)
        return _table(
            [str(r.get("op")) for r in records],
            instant,
            [_logged_image(r.get("before")) for r in records],
            [_logged_image(r.get("after")) for r in records],
        )
    n = table.num_rows
    return pa.table(
        {
            "op": table.column("op").combine_chunks().cast(pa.string()),
            "ts_ms": pa.array([instant] * n, pa.string()),
            "before": json_rows(table.column("before").combine_chunks(), spaced=True),
            "after": json_rows(table.column("after").combine_chunks(), spaced=True),
        },
        schema=CDC_SCHEMA,
    )


def _images_by_key(table: pa.Table, skip_nulls: bool = True) -> dict[str, str]:
    """Record key -> the record's JSON image, of every row of `table`."""
    images = _json_rows(table, skip_nulls)
    return dict(zip(table.column(RECORD_KEY).to_pylist(), images, strict=True))


# ---- JSON images ------------------------------------------------------------------------------


def _logged_image(record: Any) -> str | None:
    """A CDC log's image: Hudi prints the Avro record (`GenericData.toString` spacing)."""
    return None if record is None else json_record(record)


def _json_rows(table: pa.Table, skip_nulls: bool = True) -> list[str]:
    """Each row of a data file as compact JSON: meta fields first, then the data columns, null
    fields left out (Hudi prints these rows with Jackson, which skips absent values) unless
    `skip_nulls` is off (`CdcTask.avro_slices`)."""
    names = [n for n in META_FIELDS if n in table.column_names]
    names += [n for n in table.column_names if n not in META_FIELDS]
    texts = json_rows(table.select(names), spaced=False, skip_nulls=skip_nulls)
    return texts.to_pylist()  # type: ignore[no-any-return]


__all__ = [
    "CDC_SCHEMA",
    "CdcChange",
    "CdcPlan",
    "CdcTask",
    "is_cdc_query",
    "logging_mode",
    "plan_cdc",
    "read_cdc_arrow",
    "read_cdc_task",
]
