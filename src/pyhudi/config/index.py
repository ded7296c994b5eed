"""Index options (`HoodieIndexConfig`, `HoodieStorageConfig` bloom keys)."""

from __future__ import annotations

from pyhudi.config.options import boolean, choice, integer, number, string

INDEX_TYPE = choice(
    "hoodie.index.type",
    "SIMPLE",
    ("SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM", "BUCKET", "RECORD_INDEX"),
    "How incoming keys find their file groups.",
)
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
