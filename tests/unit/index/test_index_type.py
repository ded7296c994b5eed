"""`hoodie.index.type` parsed once into `IndexType`, and the lookup `pyhudi.index.locate` picks."""

from __future__ import annotations

import pytest

from pyhudi.config.index import INDEX_TYPE, IndexType, index_type
from pyhudi.exceptions import ConfigError
from pyhudi.index.locate import Lookup, choose_lookup, locates_exactly
from pyhudi.writer.config import resolve_write_config

OPTIONS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "part",
}


def test_index_type_values_are_hudis_option_values_in_any_case():
    assert [t.value for t in IndexType] == list(INDEX_TYPE.choices or ())
    assert index_type({}) is IndexType.SIMPLE
    assert index_type({INDEX_TYPE.key: " global_bloom "}) is IndexType.GLOBAL_BLOOM
    assert resolve_write_config({**OPTIONS, INDEX_TYPE.key: "bucket"}, None).index_type is (
        IndexType.BUCKET
    )


def test_unknown_index_type_is_a_config_error_listing_the_types():
    with pytest.raises(ConfigError, match=r"invalid value 'HBASE' for hoodie\.index\.type.*SIMPLE"):
        index_type({INDEX_TYPE.key: "HBASE"})
    with pytest.raises(ConfigError, match=r"hoodie\.index\.type"):
        resolve_write_config({**OPTIONS, INDEX_TYPE.key: "INMEMORY"}, None)


def test_what_each_index_type_implies():
    assert {t for t in IndexType if t.is_global} == {
        IndexType.GLOBAL_SIMPLE,
        IndexType.GLOBAL_BLOOM,
        IndexType.RECORD_INDEX,
    }
    assert {t for t in IndexType if t.prunes_by_bloom_filters} == {
        IndexType.BLOOM,
        IndexType.GLOBAL_BLOOM,
    }
    assert {t for t in IndexType if t.reads_base_file_keys} == {
        IndexType.SIMPLE,
        IndexType.GLOBAL_SIMPLE,
        IndexType.BLOOM,
        IndexType.GLOBAL_BLOOM,
    }
    assert [t for t in IndexType if t.routes_by_bucket] == [IndexType.BUCKET]
    assert [t for t in IndexType if t.reads_record_index] == [IndexType.RECORD_INDEX]


@pytest.mark.parametrize(
    ("index", "lookup"),
    [("BUCKET", Lookup.BUCKET), ("SIMPLE", Lookup.SPARK), ("RECORD_INDEX", Lookup.SPARK)],
)
def test_lookup_without_the_batch_size_is_the_bucket_or_the_spark_lookup(index, lookup):
    cfg = resolve_write_config({**OPTIONS, INDEX_TYPE.key: index}, None)
    plan = choose_lookup(None, cfg)  # type: ignore[arg-type]  # no table is read without a batch
    assert plan.lookup is lookup and plan.files == ()
    assert locates_exactly(cfg) is (index == "RECORD_INDEX")
