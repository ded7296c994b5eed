"""`pyhudi.reader.pruning`: column values from partition paths, and pruning partitions by filters."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pyhudi.exceptions import ConfigError
from pyhudi.reader.pruning import partition_values, prune_partitions, validate_filters
from pyhudi.table.config import TableConfig
from pyhudi.table.context import TableContext


def table(
    fields: str,
    *,
    keygen: str = "org.apache.hudi.keygen.SimpleKeyGenerator",
    hive: bool = False,
    urlencode: bool = False,
):
    """A stand-in for a TableContext: pruning only reads `ctx.config`."""
    props = {
        "hoodie.table.partition.fields": fields,
        "hoodie.table.keygenerator.class": keygen,
        "hoodie.datasource.write.hive_style_partitioning": str(hive).lower(),
        "hoodie.datasource.write.partitionpath.urlencode": str(urlencode).lower(),
    }
    return SimpleNamespace(config=TableConfig(props))


HIVE = table("city", hive=True)
PLAIN = table("byteField")
TWO = table("byteField,shortField", keygen="org.apache.hudi.keygen.ComplexKeyGenerator", hive=True)
NUMBERS = ["10", "20", "30"]


# ---- partition_values --------------------------------------------------------------------------


def test_hive_style_path_yields_field_values():
    assert partition_values(HIVE, "city=sf") == {"city": "sf"}


def test_non_hive_path_yields_field_values_by_position():
    assert partition_values(PLAIN, "10") == {"byteField": "10"}
    two_plain = table("a,b", keygen="org.apache.hudi.keygen.ComplexKeyGenerator")
    assert partition_values(two_plain, "x/y") == {"a": "x", "b": "y"}


def test_multi_level_hive_path_yields_every_field():
    assert partition_values(TWO, "byteField=10/shortField=300") == {
        "byteField": "10",
        "shortField": "300",
    }


def test_url_encoded_segments_are_decoded():
    encoded = table("d", urlencode=True)
    assert partition_values(encoded, "2024%2F01%2F02") == {"d": "2024/01/02"}
    hive_encoded = table("d", hive=True, urlencode=True)
    assert partition_values(hive_encoded, "d=a%3Db%25") == {"d": "a=b%"}


def test_not_url_encoded_table_keeps_percent_signs():
    assert partition_values(PLAIN, "a%2Fb") == {"byteField": "a%2Fb"}


def test_hive_default_partition_is_null():
    assert partition_values(HIVE, "city=__HIVE_DEFAULT_PARTITION__") == {"city": None}
    assert partition_values(PLAIN, "__HIVE_DEFAULT_PARTITION__") == {"byteField": None}


@pytest.mark.parametrize("path", ["", "sf", "city=sf/extra", "town=sf"])
def test_paths_that_do_not_encode_the_fields_give_none(path):
    assert partition_values(HIVE, path) is None


@pytest.mark.parametrize(
    "keygen",
    [
        "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "org.apache.hudi.keygen.CustomKeyGenerator",
        "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
    ],
)
def test_paths_of_generators_that_transform_values_give_none(keygen):
    assert partition_values(table("ts", keygen=keygen), "2024/01/01") is None


def test_unpartitioned_table_gives_none():
    assert partition_values(table(""), "") is None


def test_partition_values_of_real_tables(hudi_tables):
    ctx = TableContext.open(str(hudi_tables["cow__v6_complexkeygen_hivestyle"]))
    values = [partition_values(ctx, p) for p in ctx.view().partition_paths()]
    assert values == [
        {"byteField": "10", "shortField": "300"},
        {"byteField": "20", "shortField": "100"},
        {"byteField": "30", "shortField": "100"},
    ]
    plain = TableContext.open(str(hudi_tables["cow__v6_simplekeygen_nonhivestyle"]))
    assert [partition_values(plain, p) for p in plain.view().partition_paths()] == [
        {"byteField": v} for v in NUMBERS
    ]
    timestamp = TableContext.open(str(hudi_tables["cow__v6_timebasedkeygen_nonhivestyle"]))
    assert partition_values(timestamp, "2023/04/01/12") is None


# ---- prune_partitions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column_filter", "kept"),
    [
        (("byteField", "=", 20), ["20"]),
        (("byteField", "==", "20"), ["20"]),
        (("byteField", "!=", 20), ["10", "30"]),
        (("byteField", "<", 30), ["10", "20"]),
        (("byteField", "<=", 20), ["10", "20"]),
        (("byteField", ">", 10), ["20", "30"]),
        (("byteField", ">=", 30), ["30"]),
        (("byteField", "in", [10, 30]), ["10", "30"]),
        (("byteField", "not in", [10, 30]), ["20"]),
        (("byteField", "in", []), []),
    ],
)
def test_prune_partitions_by_each_operator(column_filter, kept):
    assert prune_partitions(PLAIN, NUMBERS, [column_filter]) == kept


def test_numeric_filters_compare_as_numbers_not_strings():
    assert prune_partitions(PLAIN, ["9", "10", "100"], [("byteField", "<", 20)]) == ["9", "10"]
    assert prune_partitions(PLAIN, ["9", "10", "100"], [("byteField", "<", "20")]) == ["10", "100"]


def test_string_filters_on_hive_paths():
    cities = ["city=chennai", "city=san_francisco", "city=sao_paulo"]
    assert prune_partitions(HIVE, cities, [("city", "=", "chennai")]) == ["city=chennai"]
    assert prune_partitions(HIVE, cities, [("city", "not in", ["chennai", "sao_paulo"])]) == [
        "city=san_francisco"
    ]
    assert prune_partitions(HIVE, cities, [("city", ">", "s")]) == [
        "city=san_francisco",
        "city=sao_paulo",
    ]


def test_all_filters_must_match():
    paths = [
        "byteField=10/shortField=300",
        "byteField=20/shortField=100",
        "byteField=30/shortField=100",
    ]
    filters = [("byteField", ">", 10), ("shortField", "=", 100)]
    assert prune_partitions(TWO, paths, filters) == paths[1:]
    assert prune_partitions(TWO, paths, [*filters, ("byteField", "!=", 30)]) == paths[1:2]


def test_filters_on_other_columns_do_not_prune():
    assert prune_partitions(PLAIN, NUMBERS, [("name", "=", "x")]) == NUMBERS
    assert prune_partitions(PLAIN, NUMBERS, []) == NUMBERS


def test_paths_without_values_are_kept_and_null_partitions_match_nothing():
    paths = ["unexpected/layout", "__HIVE_DEFAULT_PARTITION__", "10"]
    assert prune_partitions(PLAIN, paths, [("byteField", "=", 10)]) == ["unexpected/layout", "10"]
    assert prune_partitions(PLAIN, paths, [("byteField", "!=", 10)]) == ["unexpected/layout"]


def test_boolean_filters_compare_case_insensitively():
    flags = table("flag")
    assert prune_partitions(flags, ["true", "false"], [("flag", "=", True)]) == ["true"]


def test_timestamp_key_generator_tables_are_never_pruned():
    ts = table("ts", keygen="org.apache.hudi.keygen.TimestampBasedKeyGenerator")
    assert prune_partitions(ts, ["2024/01/01", "2024/01/02"], [("ts", "=", "2024/01/01")]) == [
        "2024/01/01",
        "2024/01/02",
    ]


# ---- validate_filters ------------------------------------------------------------------------


def test_validate_filters_normalises_operator_case():
    assert validate_filters([("a", "IN", [1]), ("b", "Not In", [2]), ("c", "=", 3)]) == (
        ("a", "in", [1]),
        ("b", "not in", [2]),
        ("c", "=", 3),
    )


@pytest.mark.parametrize("bad", [("a", "like", "x"), ("a", "="), ("a", "=", 1, 2)])
def test_validate_filters_rejects_unknown_shapes_and_operators(bad):
    with pytest.raises(ConfigError, match="column, op, value"):
        validate_filters([bad])
