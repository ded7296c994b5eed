"""Index options (`HoodieIndexConfig`, `HoodieStorageConfig` bloom keys)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from pyhudi.config.options import boolean, choice, integer, number, string


class IndexType(str, Enum):
    """`hoodie.index.type`: how a write finds the file groups of its records' keys. What each
    type implies is asked through the properties below, so the types are compared only here;
    `pyhudi.index.locate` picks the lookup."""

    SIMPLE = "SIMPLE"
    GLOBAL_SIMPLE = "GLOBAL_SIMPLE"
    BLOOM = "BLOOM"
    GLOBAL_BLOOM = "GLOBAL_BLOOM"
    BUCKET = "BUCKET"
    RECORD_INDEX = "RECORD_INDEX"

    @property
    def is_global(self) -> bool:
        """A key is unique in the table, not per partition (and may move between partitions)."""
        return self in (IndexType.GLOBAL_SIMPLE, IndexType.GLOBAL_BLOOM, IndexType.RECORD_INDEX)

    @property
    def routes_by_bucket(self) -> bool:
        """No lookup: a key's hash names its bucket's file group (`pyhudi.index.bucket`)."""
        return self is IndexType.BUCKET

    @property
    def reads_base_file_keys(self) -> bool:
        """The lookup reads the record keys of the latest base files (`pyhudi.index.simple`)."""
        return self in (
            IndexType.SIMPLE,
            IndexType.GLOBAL_SIMPLE,
            IndexType.BLOOM,
            IndexType.GLOBAL_BLOOM,
        )

    @property
    def prunes_by_bloom_filters(self) -> bool:
        """Base files are first pruned by their footers' key ranges and bloom filters."""
        return self in (IndexType.BLOOM, IndexType.GLOBAL_BLOOM)

    @property
    def reads_record_index(self) -> bool:
        """The lookup reads the metadata table's record index (kept with every commit)."""
        return self is IndexType.RECORD_INDEX


INDEX_TYPE = choice(
    "hoodie.index.type",
    IndexType.SIMPLE.value,
    tuple(t.value for t in IndexType),
    "How incoming keys find their file groups.",
)


def index_type(options: Mapping[str, str]) -> IndexType:
    """`hoodie.index.type` of `options` (a value outside `IndexType`: `INDEX_TYPE`'s ConfigError)."""
    return IndexType(INDEX_TYPE.get(options))


BLOOM_NUM_ENTRIES = integer("hoodie.index.bloom.num_entries", 60000, "Keys per bloom filter row.")
BLOOM_FPP = number(
    "hoodie.index.bloom.fpp", 0.000000001, "Bloom filter false-positive probability."
)
BLOOM_FILTER_TYPE = choice(
    "hoodie.bloom.index.filter.type", "DYNAMIC_V0", ("SIMPLE", "DYNAMIC_V0"), "Bloom filter type."
)
BLOOM_DYNAMIC_MAX_ENTRIES = integer(
    "hoodie.bloom.index.filter.dynamic.max.entries",
    100000,
    "Upper bound of a dynamic bloom filter.",
)
BLOOM_PRUNE_BY_RANGES = boolean(
    "hoodie.bloom.index.prune.by.ranges",
    True,
    "Prune candidate files by footer min/max record keys.",
)
PARQUET_BLOOM_FILTER_ENABLED = boolean(
    "hoodie.parquet.bloom.filter.enabled", True, "Write the bloom filter into base file footers."
)
GLOBAL_INDEX_UPDATE_PARTITION_PATH = boolean(
    "hoodie.simple.index.update.partition.path",
    True,
    "Global index: a key arriving in a new partition moves there (delete old + insert new).",
    "hoodie.bloom.index.update.partition.path",
)
RECORD_INDEX_UPDATE_PARTITION_PATH = boolean(
    "hoodie.record.index.update.partition.path",
    False,
    "RECORD_INDEX: a key arriving in a new partition moves there (delete old + insert new).",
)
BUCKET_NUM = integer(
    "hoodie.bucket.index.num.buckets", 256, "Buckets per partition of the bucket index."
)
BUCKET_HASH_FIELD = string(
    "hoodie.bucket.index.hash.field",
    None,
    "Fields hashed by the bucket index (default: record key).",
)
BUCKET_ENGINE = choice(
    "hoodie.index.bucket.engine", "SIMPLE", ("SIMPLE", "CONSISTENT_HASHING"), "Bucket index engine."
)
