"""Java `.properties` files: `hoodie.properties` and `.hoodie_partition_metadata` (§1.2, §1.9).

| part          | bytes (ISO-8859-1 text)                                                  |
|---------------|--------------------------------------------------------------------------|
| comments      | `#...` lines: `#Properties saved on <ISO instant>`, `#<Date.toString()>`   |
| entries       | `key=value` lines; `\\ = : # !` escaped with `\\`, non-Latin-1 as `\\uXXXX`   |
| checksum      | `hoodie.table.checksum` = CRC32 of UTF-8 `<database or ''>.<table name>`  |
"""

from __future__ import annotations

import re
import time
import zlib
from collections.abc import Mapping
from datetime import datetime, timezone

_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}
_SPECIAL = set("\\=:#!")
_UNESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _escape(text: str, *, is_key: bool) -> str:
    out = []
    for index, char in enumerate(text):
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char in _SPECIAL:
            out.append("\\" + char)
        elif char == " " and (is_key or index == 0):
            out.append("\\ ")
        elif ord(char) < 0x20 or ord(char) > 0x7E:
            out.extend(f"\\u{unit:04X}" for unit in _utf16_units(char))
        else:
            out.append(char)
    return "".join(out)


def _utf16_units(char: str) -> list[int]:
    data = char.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


def java_date_string(now: float | None = None) -> str:
    """`java.util.Date.toString()` style, e.g. `Thu Apr 18 17:28:02 UTC 2024`."""
    moment = time.gmtime(now if now is not None else time.time())
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", moment)


def dump_properties(entries: Mapping[str, str], comments: tuple[str, ...] = ()) -> bytes:
    lines = [f"#{comment}" for comment in comments]
    for key, value in entries.items():
        lines.append(f"{_escape(key, is_key=True)}={_escape(str(value), is_key=False)}")
    return ("\n".join(lines) + "\n").encode("latin-1")


def dump_table_properties(entries: Mapping[str, str], *, updated: bool = False) -> bytes:
    now = datetime.now(timezone.utc)
    iso = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
    first = f"Updated at {iso}" if updated else f"Properties saved on {iso}"
    return dump_properties(entries, (first, java_date_string(now.timestamp())))


def load_properties(data: bytes) -> dict[str, str]:
    """Parse a Java properties file (comments, continuations, escapes, `=`/`:`/space separators)."""
    text = data.decode("latin-1")
    result: dict[str, str] = {}
    for logical in _logical_lines(text):
        key, value = _split_entry(logical)
        result[_unescape(key)] = _unescape(value)
    return result


def _java_lines(text: str) -> list[str]:
    """Lines as `java.util.Properties` ends them: at \n, \r or \r\n only."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _logical_lines(text: str) -> list[str]:
    lines, current = [], ""
    for raw in _java_lines(text):
        line = raw.lstrip(" \t\f")
        if current == "" and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            current += line[:-1]
            continue
        lines.append(current + line)
        current = ""
    if current:
        lines.append(current)
    return lines


def _split_entry(line: str) -> tuple[str, str]:
    index, escaped = 0, False
    while index < len(line):
        char = line[index]
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "=: \t\f":
            break
        index += 1
    key, rest = line[:index], line[index:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


_ESCAPE = re.compile(r"\\(u.{4}|.)", re.DOTALL)


def _unescaped(match: re.Match[str]) -> str:
    escape = match.group(1)
    if len(escape) == 5:  # \uXXXX
        return chr(int(escape[1:], 16))
    return _UNESCAPES.get(escape, escape)


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    # A backslash ends the text: kept. Surrogate pairs written as two \\uXXXX escapes become one
    # character.
    out = _ESCAPE.sub(_unescaped, text)
    return out.encode("utf-16", "surrogatepass").decode("utf-16")


def table_checksum(table_name: str, database_name: str | None) -> int:
    """`HoodieTableConfig.generateChecksum`: CRC32 of `<db>.<name>` as an unsigned number."""
    return zlib.crc32(f"{database_name or ''}.{table_name}".encode())


# ---- .hoodie_partition_metadata ----------------------------------------------------------------


def dump_partition_metadata(commit_time: str, partition_depth: int) -> bytes:
    return dump_properties(
        {"commitTime": commit_time, "partitionDepth": str(partition_depth)},
        ("partition metadata", java_date_string()),
    )


def load_partition_metadata(data: bytes) -> tuple[str | None, int | None]:
    props = load_properties(data)
    depth = props.get("partitionDepth")
    return props.get("commitTime"), int(depth) if depth is not None else None
