"""Which partition paths can be folders of a table: portable path segments, checked before writing.

A partition path is `/`-separated segments below the table root. Hudi allows nested paths from one
field (`yyyy/MM/dd` output formats, values holding `/`), `__HIVE_DEFAULT_PARTITION__` for null or
empty values, hive style `field=value` and any unicode letters. A segment is rejected when it

| rule                                 | why                                                        |
|--------------------------------------|------------------------------------------------------------|
| is empty (leading, trailing, `//`)   | `/x` is an absolute path; joining it drops the table root  |
| is `.` or `..`                       | `../../x` walks out of the table                           |
| holds a control character (Unicode Cc: U+0000-U+001F, U+007F-U+009F) | object stores and hudi-rs reject the path (`invalid path`) |
| is longer than 255 bytes (UTF-8)     | no common file system takes a longer folder name           |

`hoodie.datasource.write.partitionpath.urlencode=true` escapes `/` and C0 control characters
(Hive's `escapePathName`) before this check, so such values pass encoded; `.`/`..` stay invalid.
Both a Python check (one value) and a vectorised Arrow check (a column) live here.
"""

from __future__ import annotations

import functools
import unicodedata

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.exceptions import InvalidRecordError

MAX_SEGMENT_BYTES = 255
#: RE2 (Arrow) and Java (Spark) both read `\p{Cc}` as Unicode's control characters.
CONTROL_CHAR_PATTERN = r"\p{Cc}"


def segment_problem(segment: str) -> str | None:
    """Why `segment` cannot be a folder name below the table root, or None."""
    if segment == "":
        return "an empty path segment (a leading, trailing or doubled '/')"
    if segment in (".", ".."):
        return f"a {segment!r} path segment"
    for char in segment:
        if unicodedata.category(char) == "Cc":
            return f"the control character U+{ord(char):04X}"
    size = len(segment.encode("utf-8"))
    if size > MAX_SEGMENT_BYTES:
        return f"a path segment of {size} bytes (at most {MAX_SEGMENT_BYTES})"
    return None


#: What a write whose tasks refused a partition path fails with (after `KEY_ERROR_PREFIX`).
GUARD_FAILURE = "a partition value is not a usable folder name"


@functools.lru_cache(maxsize=4096)
def refused_partition_path(path: str) -> bool:
    """Whether a write task must not make anything in partition `path` (`""`, the table root,
    is fine): `partition_path_problem`, remembered per path."""
    return bool(path) and partition_path_problem(path) is not None


def partition_path_problem(path: str) -> str | None:
    """Why a partition path (or one field's part of it) cannot be written, or None."""
    for segment in path.split("/"):
        problem = segment_problem(segment)
        if problem is not None:
            return problem
    return None


def first_invalid_index(values: pa.Array | pa.ChunkedArray) -> int | None:
    """Row index of the first value that `partition_path_problem` rejects (vectorised), or None."""
    if len(values) == 0:
        return None
    values = pc.fill_null(values, "")
    pieces = pc.split_pattern(values, "/")
    if isinstance(pieces, pa.ChunkedArray):
        pieces = pieces.combine_chunks()
    flat = pc.list_flatten(pieces)
    bad = pc.or_(
        pc.is_in(flat, value_set=pa.array(["", ".", ".."])),
        pc.greater(pc.binary_length(flat), MAX_SEGMENT_BYTES),
    )
    bad = pc.or_(bad, pc.match_substring_regex(flat, CONTROL_CHAR_PATTERN))
    hits = pc.indices_nonzero(bad)
    if len(hits) == 0:
        return None
    parents = pc.list_parent_indices(pieces)
    return int(parents[hits[0].as_py()].as_py())


def invalid_partition_value(
    record_key: object, field: str, value: object, problem: str
) -> InvalidRecordError:
    """The error for one record whose partition value cannot be a folder of the table."""
    return InvalidRecordError(
        f"record key {record_key!r}: partition path field {field!r} has value {value!r}, which "
        f"would make {problem} in the table's folder path; clean the value, or set "
        "hoodie.datasource.write.partitionpath.urlencode=true to escape '/' and control "
        "characters (nothing was written)"
    )
