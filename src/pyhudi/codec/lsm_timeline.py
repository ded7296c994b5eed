"""The LSM timeline history of table versions 8 and 9 (Hudi 1.x `LSMTimelineWriter`): file names,
the manifest and version files, and the parquet files of `HoodieLSMTimelineInstant` rows.

Everything lives in `.hoodie/timeline/history/` (`hoodie.timeline.path` /
`hoodie.timeline.history.path`):

| file                                  | content                                                       |
|---------------------------------------|---------------------------------------------------------------|
| `<minInstant>_<maxInstant>_<L>.parquet` | the rows of consecutive archived instants; `L` the LSM layer (one digit) |
| `manifest_<N>`                        | snapshot `N`: the live parquet files with their lengths (JSON below) |
| `_version_`                           | the latest snapshot `N`, decimal, no newline                  |

A manifest is Jackson's default pretty printer over `{"files": [{"fileName", "fileLen"}]}`, no
trailing newline (`[ ]` when empty):

    {
      "files" : [ {
        "fileName" : "20250101000000000_20250101000500000_0.parquet",
        "fileLen" : 3060
      } ]
    }

A parquet file holds one row per archived instant, as Hudi's Avro parquet writer writes
`HoodieLSMTimelineInstant` (no Hudi meta fields, no bloom filter):

| column         | parquet type            | value                                                    |
|----------------|-------------------------|----------------------------------------------------------|
| instantTime    | optional binary (UTF8)  | requested time                                           |
| completionTime | optional binary (UTF8)  | completion time (from the completed file's name)         |
| action         | optional binary (UTF8)  | the completed action (`commit` for a compaction)         |
| metadata       | optional binary         | the completed file's bytes; null when the file is empty  |
| plan           | optional binary         | clean: `.clean.requested`; compaction/logcompaction: the `.requested` plan; replacecommit/clustering: the `.inflight` bytes when not empty, else the `.requested` bytes; null otherwise |
| version        | required int32          | 1                                                         |

Footer key-value metadata: `parquet.avro.schema` (the Avro schema below, as Hudi's generated class
prints it) and `writer.model.name = avro`. GZIP pages (Hudi's default parquet codec), dictionary
pages only where parquet-mr keeps them (`action`, `version`), no statistics on the two binary
payload columns (parquet-mr drops statistics above 4 KiB). pyarrow names the root group `schema`
where parquet-mr writes the record's full name; readers ignore it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.exceptions import CorruptFileError

VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
#: `LSMTimeline.LSM_TIMELINE_INSTANT_VERSION_1`, the `version` column of every row.
INSTANT_VERSION_1 = 1
_FILE_RE = re.compile(r"^(\d+)_(\d+)_(\d)\.parquet$")

#: `HoodieLSMTimelineInstant.getClassSchema().toString()` of Hudi 1.2 (the parquet footer's copy).
AVRO_SCHEMA_JSON = (
    '{"type":"record","name":"HoodieLSMTimelineInstant","namespace":"org.apache.hudi.avro.model",'
    '"fields":[{"name":"instantTime","type":["null",{"type":"string","avro.java.string":"String"}],'
    '"default":null},{"name":"completionTime","type":["null",{"type":"string",'
    '"avro.java.string":"String"}],"default":null},{"name":"action","type":["null",'
    '{"type":"string","avro.java.string":"String"}],"default":null},{"name":"metadata",'
    '"type":["null","bytes"],"default":null},{"name":"plan","type":["null","bytes"],'
    '"default":null},{"name":"version","type":"int","default":1}]}'
)
ARROW_SCHEMA = pa.schema(
    [
        pa.field("instantTime", pa.string()),
        pa.field("completionTime", pa.string()),
        pa.field("action", pa.string()),
        pa.field("metadata", pa.binary()),
        pa.field("plan", pa.binary()),
        pa.field("version", pa.int32(), nullable=False),
    ]
)
_FOOTER = {"parquet.avro.schema": AVRO_SCHEMA_JSON, "writer.model.name": "avro"}
#: parquet-mr's `MAX_STATS_SIZE`: larger min + max are not kept.
_MAX_STATISTICS_BYTES = 4096


@dataclass(frozen=True)
class LsmInstant:
    """One `HoodieLSMTimelineInstant` row."""

    instant_time: str
    completion_time: str | None
    action: str
    metadata: bytes | None
    plan: bytes | None
    version: int = INSTANT_VERSION_1


@dataclass(frozen=True)
class LsmFileEntry:
    """One manifest entry: a parquet file of the history and its length in bytes."""

    file_name: str
    file_len: int


# ---- names -----------------------------------------------------------------------------------


def lsm_file_name(min_instant: str, max_instant: str, layer: int) -> str:
    """`<min>_<max>_<layer>.parquet` (`LSMTimelineWriter.newFileName`)."""
    return f"{min_instant}_{max_instant}_{layer}.parquet"


def parse_lsm_file_name(name: str) -> tuple[str, str, int] | None:
    """(min instant, max instant, layer) of a history parquet file name, else None."""
    match = _FILE_RE.match(name)
    if match is None:
        return None
    return match.group(1), match.group(2), int(match.group(3))


def manifest_file_name(version: int) -> str:
    return f"{MANIFEST_PREFIX}{version}"


def parse_manifest_version(name: str) -> int | None:
    """N of `manifest_<N>`; None for other names (Hudi skips `.tmp` files too)."""
    if not name.startswith(MANIFEST_PREFIX) or name.endswith(".tmp"):
        return None
    rest = name[len(MANIFEST_PREFIX) :]
    return int(rest) if rest.isdigit() else None


# ---- manifest and version ----------------------------------------------------------------------


def encode_manifest(entries: Sequence[LsmFileEntry]) -> bytes:
    """The manifest JSON exactly as Jackson's default pretty printer writes it."""
    if not entries:
        return b'{\n  "files" : [ ]\n}'
    items = ", ".join(
        f'{{\n    "fileName" : "{e.file_name}",\n    "fileLen" : {e.file_len}\n  }}'
        for e in entries
    )
    return f'{{\n  "files" : [ {items} ]\n}}'.encode()


def decode_manifest(data: bytes, *, what: str = "LSM manifest") -> list[LsmFileEntry]:
    try:
        files = json.loads(data).get("files") or []
        return [LsmFileEntry(str(f["fileName"]), int(f["fileLen"])) for f in files]
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise CorruptFileError(f"cannot read {what}: {err}") from err


def encode_version(version: int) -> bytes:
    return str(version).encode()


# ---- parquet -----------------------------------------------------------------------------------


def encode_lsm_file(rows: Sequence[LsmInstant]) -> bytes:
    """A history parquet file of `rows`, in their order (see the module docstring)."""
    table = pa.table(
        {
            "instantTime": [r.instant_time for r in rows],
            "completionTime": [r.completion_time for r in rows],
            "action": [r.action for r in rows],
            "metadata": [r.metadata for r in rows],
            "plan": [r.plan for r in rows],
            "version": [r.version for r in rows],
        },
        schema=ARROW_SCHEMA,
    )
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(
        sink,
        ARROW_SCHEMA,
        compression="gzip",
        use_dictionary=["action", "version"],
        write_statistics=_columns_with_statistics(rows),
        store_schema=False,
        version="1.0",
    ) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata(_FOOTER)
    return bytes(sink.getvalue().to_pybytes())


def _columns_with_statistics(rows: Sequence[LsmInstant]) -> list[str]:
    """parquet-mr keeps a column chunk's min/max only when together they fit in 4 KiB."""
    columns = ["instantTime", "completionTime", "action", "version"]
    for column, values in (
        ("metadata", [r.metadata for r in rows if r.metadata is not None]),
        ("plan", [r.plan for r in rows if r.plan is not None]),
    ):
        if not values or len(min(values)) + len(max(values)) <= _MAX_STATISTICS_BYTES:
            columns.append(column)
    return columns


def decode_lsm_file(data: bytes, *, what: str = "LSM timeline file") -> list[LsmInstant]:
    """The rows of a history parquet file, in file order."""
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as err:
        raise CorruptFileError(f"cannot read {what}: {err}") from err
    rows = []
    for row in table.to_pylist():
        rows.append(
            LsmInstant(
                instant_time=str(row["instantTime"]),
                completion_time=row.get("completionTime"),
                action=str(row["action"]),
                metadata=row.get("metadata"),
                plan=row.get("plan"),
                version=int(row.get("version") or INSTANT_VERSION_1),
            )
        )
    return rows
