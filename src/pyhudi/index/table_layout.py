"""The index an existing table's file groups demand.

Hudi records no index type in `hoodie.properties`; a table written with the bucket index shows it
in its file ids, each the zero-padded bucket number in place of a UUID's first eight characters.
Such a table must be written through the bucket index: a write that looks keys up another way
puts new keys in whatever file group takes inserts (not their bucket's), where the next bucket
write cannot find them and writes them again, and on merge-on-read it misses the keys that only a
log file holds. So a write that names no index takes the bucket index when it gives the number of
buckets, and is refused otherwise; a write that names another index is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pyhudi.config import index as index_keys
from pyhudi.config import write as write_keys
from pyhudi.config.index import IndexType
from pyhudi.exceptions import ConfigError
from pyhudi.table.context import TableContext

#: Bucket numbers are below this: a random UUID whose first eight characters are digits (one in
#: about 43) almost never also reads as a number this small, so a table of random file ids is not
#: taken for a bucketed one.
MAX_BUCKET_NUMBER = 100_000

#: Operations that route records to file groups (the others replace or remove whole groups).
_ROUTING_OPERATIONS = ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite")


def bucket_of_file_id(file_id: str) -> int | None:
    """The bucket number a bucket index's file id starts with, or None for another file id."""
    prefix = file_id[:8]
    if len(prefix) < 8 or not prefix.isdigit() or file_id[8:9] != "-":
        return None
    bucket = int(prefix)
    return bucket if bucket < MAX_BUCKET_NUMBER else None


def is_bucket_layout(file_ids: Iterable[str]) -> bool:
    """Every file id (at least one) is a bucket's."""
    ids = list(file_ids)
    return bool(ids) and all(bucket_of_file_id(f) is not None for f in ids)


def index_options_for_table(ctx: TableContext, options: Mapping[str, str]) -> dict[str, str]:
    """`options`, with the bucket index set when the table's layout demands it and the write did
    not name an index; a `ConfigError` when the write cannot be routed as the layout demands."""
    resolved = dict(options)
    if write_keys.OPERATION.get(options).lower() not in _ROUTING_OPERATIONS:
        return resolved
    named = index_keys.INDEX_TYPE.is_set(options)
    if named and index_keys.index_type(options) is IndexType.BUCKET:
        return resolved
    slices = ctx.view().latest_file_slices()
    if not is_bucket_layout(s.file_id for s in slices):
        return resolved
    how = (
        f"{index_keys.INDEX_TYPE.key}=BUCKET and {index_keys.BUCKET_NUM.key} "
        "(the number it was created with)"
    )
    if named:
        raise ConfigError(
            f"{ctx.uri} was written with the bucket index (its file groups are buckets), but "
            f"this write asks {index_keys.INDEX_TYPE.key}={index_keys.INDEX_TYPE.get(options)}: "
            f"keys would land outside their buckets. Write it with {how}"
        )
    if not index_keys.BUCKET_NUM.is_set(options):
        raise ConfigError(
            f"{ctx.uri} was written with the bucket index (its file groups are buckets): "
            f"give this write {how}; without them its keys would land outside their buckets"
        )
    resolved[index_keys.INDEX_TYPE.key] = IndexType.BUCKET.value
    return resolved
