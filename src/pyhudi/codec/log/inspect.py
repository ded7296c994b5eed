"""Reports on log files for `pyhudi log inspect` and `pyhudi log verify`.

| report field (per block) | source                                                               |
|--------------------------|----------------------------------------------------------------------|
| offset, size_bytes       | block frame (MAGIC to trailer); for corrupt ranges the bytes covered |
| format_version, type     | frame fields 14 and 18                                               |
| header                   | header map by name; SCHEMA shown as `<record full name> (<n> fields)` |
| record_count             | Avro/CDC: content bytes 4..8; parquet: footer; HFILE: trailer        |
| delete_count             | delete blocks: length of the decoded `HoodieDeleteRecordList`        |
| target_instant_time      | command blocks: TARGET_INSTANT_TIME                                  |
| records                  | with `with_records=True`: decoded records (Avro, delete, parquet, HFILE) |

>>> from pyhudi.codec.log.writer import encode_blocks, rollback_block
>>> report = inspect_log(encode_blocks([rollback_block("20250126040936578", "20250126040826878")]))
>>> report.is_valid, report.blocks[0].target_instant_time
(True, '20250126040826878')
"""

from __future__ import annotations

import base64
import json
import os
import struct
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, is_dataclass, replace
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from typing import Any, BinaryIO

from pyhudi.codec.file_names import LOG_FILE_RE, parse_log_file
from pyhudi.codec.hfile import HFileReader
from pyhudi.codec.log import avro_content, delete_content, hfile_content, parquet_content
from pyhudi.codec.log.reader import LocatedBlock, iter_blocks
from pyhudi.exceptions import (
    CorruptFileError,
    HudiError,
    UnsupportedOperationError,
    UnsupportedVersionError,
)
from pyhudi.model.enums import HeaderMetadataType, LogBlockType
from pyhudi.model.file import LogFile


@dataclass(frozen=True)
class BlockReport:
    """What one block (or one corrupt byte range) of a log file holds."""

    index: int
    offset: int
    size_bytes: int
    block_type: str
    format_version: int | None
    content_offset: int
    content_length: int
    header: Mapping[str, str] = field(default_factory=dict)
    record_count: int | None = None
    delete_count: int | None = None
    target_instant_time: str | None = None
    corrupt_reason: str | None = None
    #: The frame is fine but the content cannot be decoded (damaged content).
    content_error: str | None = None
    #: Content pyhudi does not decode (legacy versions); not an error of the file.
    unsupported: str | None = None
    records: tuple[Any, ...] | None = None

    @property
    def is_corrupt(self) -> bool:
        return self.corrupt_reason is not None

    @property
    def end_offset(self) -> int:
        return self.offset + self.size_bytes

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v is not None and k != "records"}
        out["header"] = dict(self.header)
        if self.records is not None:
            out["records"] = [_jsonable(r) for r in self.records]
        return out

    def format_text(self) -> str:
        head = f"#{self.index} @{self.offset} +{self.size_bytes} {self.block_type}"
        if self.is_corrupt:
            return f"{head} bytes [{self.offset}, {self.end_offset}): {self.corrupt_reason}"
        facts = [f"v{self.format_version}", *(f"{k}={v}" for k, v in self.header.items())]
        for name in ("record_count", "delete_count", "content_error", "unsupported"):
            value = getattr(self, name)
            if value is not None:
                facts.append(f"{name}={value}")
        lines = [f"{head} {' '.join(facts)}"]
        lines += [f"    {json.dumps(_jsonable(r), sort_keys=True)}" for r in self.records or ()]
        return "\n".join(lines)


@dataclass(frozen=True)
class LogFileReport:
    """Every block of one log file; `is_valid` when no range is corrupt and all content decodes."""

    path: str | None
    size_bytes: int
    blocks: tuple[BlockReport, ...]
    log_file: LogFile | None = None

    @property
    def is_valid(self) -> bool:
        return not any(b.is_corrupt or b.content_error for b in self.blocks)

    @property
    def corrupt_ranges(self) -> tuple[tuple[int, int], ...]:
        """`(start_inclusive, end_exclusive)` byte ranges of the corrupt blocks."""
        return tuple((b.offset, b.end_offset) for b in self.blocks if b.is_corrupt)

    def to_dict(self) -> dict[str, Any]:
        name: dict[str, Any] | None = None
        if self.log_file is not None:
            lf = self.log_file
            name = {"file_id": lf.file_id, "base_instant_time": lf.base_instant_time}
            name |= {"version": lf.version, "write_token": lf.write_token, "suffix": lf.suffix}
        return {
            "path": self.path,
            "size_bytes": self.size_bytes,
            "is_valid": self.is_valid,
            "log_file": name,
            "corrupt_ranges": [list(r) for r in self.corrupt_ranges],
            "blocks": [b.to_dict() for b in self.blocks],
        }

    def format_text(self) -> str:
        status = "valid" if self.is_valid else "INVALID"
        count = len(self.blocks)
        title = f"{self.path or '<bytes>'}: {self.size_bytes} bytes, {count} block{'s' * (count != 1)}, {status}"
        return "\n".join(
            [title, *("  " + b.format_text().replace("\n", "\n  ") for b in self.blocks)]
        )


def inspect_log(
    data_or_path: bytes | str | os.PathLike[str] | BinaryIO,
    *,
    with_records: bool = False,
    decode_content: bool | None = None,
    strict: bool = False,
) -> LogFileReport:
    """Report on a log file given as bytes, a path or a binary file.

    `decode_content` (default: `with_records`) decodes every block's content to check it, which
    finds damage inside well-framed blocks; `with_records` also keeps the records in the report.
    """
    path = None
    source: Any = data_or_path
    if isinstance(data_or_path, (str, os.PathLike)):
        path = os.fspath(data_or_path)
        with open(path, "rb") as file:
            source = file.read()
    decode = with_records if decode_content is None else decode_content or with_records
    blocks = tuple(
        _block_report(i, block, decode=decode, keep=with_records)
        for i, block in enumerate(iter_blocks(source, strict=strict))
    )
    size = len(source) if isinstance(source, (bytes, bytearray, memoryview)) else _file_size(source)
    log_file = parse_log_file("", os.path.basename(path)) if path else None
    return LogFileReport(path, size, blocks, log_file)


def _file_size(file: BinaryIO) -> int:
    return file.seek(0, os.SEEK_END)


def find_log_files(root: str | os.PathLike[str]) -> list[str]:
    """Log files (data, CDC, archived timeline) under `root`, hidden folders included, sorted."""
    found = []
    for folder, _, names in os.walk(root):
        found += [os.path.join(folder, n) for n in names if LOG_FILE_RE.match(n)]
    return sorted(found)


def verify_paths(
    paths: Iterable[str | os.PathLike[str]], *, strict: bool = False
) -> list[LogFileReport]:
    """Check log files (folders are searched recursively), decoding every block's content."""
    reports = []
    for path in paths:
        files = find_log_files(path) if os.path.isdir(path) else [os.fspath(path)]
        reports += [inspect_log(f, decode_content=True, strict=strict) for f in files]
    return reports


# ---- per block -------------------------------------------------------------------------------


def _block_report(index: int, block: LocatedBlock, *, decode: bool, keep: bool) -> BlockReport:
    loc = block.location
    report = BlockReport(
        index=index,
        offset=loc.offset,
        size_bytes=loc.size_bytes,
        block_type=block.block_type.name,
        format_version=block.format_version,
        content_offset=loc.content_offset,
        content_length=loc.content_length,
        header={k.name: _summarise(k, v) for k, v in block.header.items()},
        corrupt_reason=block.corrupt_reason,
    )
    if block.is_corrupt:
        return report
    try:
        return _with_content(report, block, decode=decode, keep=keep)
    except (UnsupportedOperationError, UnsupportedVersionError) as err:
        return replace(report, unsupported=str(err))
    except (HudiError, ValueError, LookupError, EOFError, struct.error) as err:
        return replace(report, content_error=f"{type(err).__name__}: {err}")


def _with_content(
    report: BlockReport, block: LocatedBlock, *, decode: bool, keep: bool
) -> BlockReport:
    kind, schema = block.block_type, block.schema_json
    if kind is LogBlockType.COMMAND_BLOCK:
        _ = block.command_type  # validates COMMAND_BLOCK_TYPE
        return replace(
            report, target_instant_time=block.header.get(HeaderMetadataType.TARGET_INSTANT_TIME)
        )
    if kind is LogBlockType.DELETE_BLOCK:
        deletes = delete_content.decode_delete_records(block.content)
        return replace(report, delete_count=len(deletes), records=tuple(deletes) if keep else None)
    records: list[Any] | None = None
    if not decode:
        count = _cheap_count(block)
    elif kind is LogBlockType.PARQUET_DATA_BLOCK:
        records = parquet_content.decode_parquet_block(block.content).to_pylist()
    elif kind is LogBlockType.HFILE_DATA_BLOCK:
        records = hfile_content.decode_hfile_block(block.content, schema)
    else:
        records = avro_content.decode_avro_records(block.content, _require_schema(block))
    if records is not None:
        count = len(records)
    return replace(
        report, record_count=count, records=tuple(records) if keep and records is not None else None
    )


def _cheap_count(block: LocatedBlock) -> int:
    if block.block_type is LogBlockType.PARQUET_DATA_BLOCK:
        return parquet_content.parquet_record_count(block.content)
    if block.block_type is LogBlockType.HFILE_DATA_BLOCK:
        return HFileReader(block.content, verify_checksums=False).entry_count
    return avro_content.avro_record_count(
        block.read_content_range(0, 8), content_length=block.location.content_length
    )


def _require_schema(block: LocatedBlock) -> str:
    if block.schema_json is None:
        raise CorruptFileError(f"{block.block_type.name} at {block.offset} has no SCHEMA header")
    return block.schema_json


def _summarise(key: HeaderMetadataType, value: str) -> str:
    if key is not HeaderMetadataType.SCHEMA:
        return value
    try:
        schema = json.loads(value)
        name = ".".join(p for p in (schema.get("namespace"), schema["name"]) if p)
        return f"{name} ({len(schema['fields'])} fields)"
    except (ValueError, KeyError, TypeError, AttributeError):
        return f"<unparseable schema, {len(value)} chars>"


def _jsonable(value: Any) -> Any:
    """Records as JSON values: bytes in base64, decimals as strings, times in ISO 8601."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, Enum):
        return value.value
    if is_dataclass(value) and not isinstance(value, type):
        # Empty tuples are fields a record does not use (a delete's `element_wrappers`).
        return _jsonable({k: v for k, v in asdict(value).items() if v != ()})
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    return value
