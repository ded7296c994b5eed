"""Hudi's schema-on-read history (`.hoodie/.schema/<instant>.schemacommit`), checked before pyhudi
reads or rewrites files by column name.

With `hoodie.schema.on.read.enable=true`, Hudi's `ALTER TABLE ... RENAME COLUMN` and `DROP COLUMN`
change the table's schema without rewriting its files: each column has an id, each schema version
(its `version_id` is the instant that wrote it) names the ids, and Hudi's readers map an older
file's columns to the query's by id. pyhudi matches columns by name, so a file written before a
rename or drop would read the renamed column as nulls (or a dropped-then-re-added column as the
old one). Such files are refused with a clear error instead; files written after the last rename
or drop, and columns added or widened, read as usual.
"""

from __future__ import annotations

import itertools
import json
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.storage import Storage
from pyhudi.timeline import META_FOLDER

SCHEMA_FOLDER = posixpath.join(META_FOLDER, ".schema")
Versions = list[tuple[int, dict[int, str]]]
_COMMITTED = ".schemacommit"


@dataclass(frozen=True)
class SchemaChange:
    """A schema version that renamed or dropped columns of the version before it."""

    instant: str
    renamed: tuple[tuple[str, str], ...]  # (old name, new name)
    dropped: tuple[str, ...]

    def describe(self) -> str:
        parts = [f"{old} -> {new}" for old, new in self.renamed]
        parts += [f"dropped {name}" for name in self.dropped]
        return f"{self.instant} ({', '.join(parts)})"


def _versions(storage: Storage, base_path: str) -> Versions:
    """(version id, column id -> name) of every version the newest committed history lists."""
    folder = posixpath.join(base_path, SCHEMA_FOLDER)
    committed = sorted(
        name
        for name in (posixpath.basename(s.path) for s in storage.list_dir(folder))
        if name.endswith(_COMMITTED) and name[: -len(_COMMITTED)].isdigit()
    )
    if not committed:
        return []
    history = json.loads(storage.read_bytes(posixpath.join(folder, committed[-1])))
    versions = []
    for schema in history.get("schemas") or []:
        names = {int(f["id"]): str(f["name"]) for f in schema.get("fields") or []}
        versions.append((int(schema.get("version_id", 0)), names))
    return sorted(versions, key=lambda v: v[0])


def _renames_and_drops(versions: Versions) -> list[SchemaChange]:
    """The schema versions that renamed or dropped a top-level column, oldest first."""
    changes = []
    for (_, before), (version, after) in itertools.pairwise(versions):
        renamed = tuple(
            (name, after[cid])
            for cid, name in before.items()
            if cid in after and after[cid] != name
        )
        dropped = tuple(name for cid, name in before.items() if cid not in after)
        if renamed or dropped:
            changes.append(SchemaChange(str(version), renamed, dropped))
    return changes


def _version_at(versions: Versions, instant: int) -> dict[int, str]:
    """The schema version that wrote a file of `instant`: the newest not after it."""
    found = versions[0][1]
    for version, names in versions:
        if version <= instant:
            found = names
    return found


def check_files_match_by_name(
    storage: Storage,
    base_path: str,
    columns: Iterable[str],
    file_instants: Iterable[str],
    as_of: str | None,
) -> None:
    """Refuse a read whose files name a column differently from the query (`columns`): a file
    written before a schema-on-read rename or drop that the query's schema includes."""
    versions = _versions(storage, base_path)
    if not versions:
        return
    wanted = {c for c in columns if not c.startswith("_hoodie_")}

    def data_names(names: dict[int, str]) -> set[str]:
        return {n for n in names.values() if not n.startswith("_hoodie_")}

    # The query's version: the newest not after the query instant whose columns are the query's,
    # else the newest of all whose columns are (pyhudi reads with the table's latest schema).
    until = int(as_of) if as_of else None
    newest_first = [names for _, names in reversed(versions)]
    not_after = [
        names for version, names in reversed(versions) if until is None or version <= until
    ]
    query = next(
        (n for n in [*not_after, *newest_first] if data_names(n) == wanted), versions[-1][1]
    )
    by_name = {name: cid for cid, name in query.items()}
    for instant in sorted(set(file_instants)):
        written = _version_at(versions, int(instant))
        differs = [
            f"{name} (now {query[cid]})" if cid in query else f"{name} (dropped)"
            for cid, name in written.items()
            if (cid in query and query[cid] != name)
            or (cid not in query and name in by_name)  # dropped, then added again
        ]
        if differs:
            changes = "; ".join(c.describe() for c in _renames_and_drops(versions))
            raise UnsupportedOperationError(
                f"table {base_path} renamed or dropped columns with Hudi's schema on read "
                f"(hoodie.schema.on.read.enable; {changes}), "
                f"and the query reads files written before that (instant {instant}: "
                f"{', '.join(differs)}): pyhudi matches columns by name and does not map them by "
                "Hudi's column ids, so it refuses rather than return nulls. Read the table with "
                "Apache Hudi, or rewrite those file groups with Hudi first."
            )


def check_writable(storage: Storage, base_path: str) -> None:
    """Refuse to write a table whose schema Hudi's schema on read manages: pyhudi neither keeps
    its history (`.hoodie/.schema`, each commit's `latest_schema`) nor maps columns by id."""
    versions = _versions(storage, base_path)
    if versions:
        raise UnsupportedOperationError(
            f"table {base_path} has Hudi's schema-on-read history ({SCHEMA_FOLDER}, "
            "hoodie.schema.on.read.enable=true): pyhudi does not keep that history or map columns "
            "by Hudi's column ids, so it does not write such a table. Write it with Apache Hudi."
        )
