"""`pyhudi.keygen.spec`: key generator kinds from Hudi class names, inference, and Custom field parsing."""

from __future__ import annotations

import pytest

from pyhudi.exceptions import ConfigError
from pyhudi.keygen.spec import (
    KeyGenKind,
    KeyGenSpec,
    PartitionFieldType,
    TimestampOptions,
    build_spec,
    kind_of_class,
)
from pyhudi.table.context import TableContext

SIMPLE, TIMESTAMP = PartitionFieldType.SIMPLE, PartitionFieldType.TIMESTAMP
TIMESTAMP_OPTIONS = {
    "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
    "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
}
#: Key generator kind of every real table (README "key generator" column).
REAL_KINDS = {
    "complexkeygen": KeyGenKind.COMPLEX,
    "simplekeygen": KeyGenKind.SIMPLE,
    "timebasedkeygen": KeyGenKind.TIMESTAMP,
    "nonpartitioned": KeyGenKind.NON_PARTITION,
    "empty": KeyGenKind.NON_PARTITION,
    "trips": KeyGenKind.SIMPLE,
    "txns_complex": KeyGenKind.COMPLEX,
    "txns_simple": KeyGenKind.SIMPLE,
    "txns_nonpart": KeyGenKind.NON_PARTITION,
}


def spec(
    class_name: str | None,
    keys: tuple[str, ...] = ("id",),
    partitions: str | None = None,
    options: dict[str, str] | None = None,
    **flags: bool,
) -> KeyGenSpec:
    return build_spec(
        class_name=class_name,
        record_key_fields=keys,
        partition_spec=partitions,
        hive_style=flags.get("hive_style", False),
        url_encode=flags.get("url_encode", False),
        options=options or {},
    )


# ---- class names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("class_name", "kind"),
    [
        ("org.apache.hudi.keygen.SimpleKeyGenerator", KeyGenKind.SIMPLE),
        ("org.apache.hudi.keygen.SimpleAvroKeyGenerator", KeyGenKind.SIMPLE),
        ("org.apache.hudi.keygen.ComplexKeyGenerator", KeyGenKind.COMPLEX),
        ("org.apache.hudi.keygen.ComplexAvroKeyGenerator", KeyGenKind.COMPLEX),
        ("org.apache.hudi.keygen.NonpartitionedKeyGenerator", KeyGenKind.NON_PARTITION),
        ("org.apache.hudi.keygen.NonpartitionedAvroKeyGenerator", KeyGenKind.NON_PARTITION),
        ("org.apache.hudi.keygen.TimestampBasedKeyGenerator", KeyGenKind.TIMESTAMP),
        ("org.apache.hudi.keygen.TimestampBasedAvroKeyGenerator", KeyGenKind.TIMESTAMP),
        ("org.apache.hudi.keygen.CustomKeyGenerator", KeyGenKind.CUSTOM),
        ("org.apache.hudi.keygen.CustomAvroKeyGenerator", KeyGenKind.CUSTOM),
        ("org.apache.hudi.keygen.GlobalDeleteKeyGenerator", KeyGenKind.GLOBAL_DELETE),
        ("SimpleKeyGenerator", KeyGenKind.SIMPLE),
        ("SIMPLE", KeyGenKind.SIMPLE),
        ("complex", KeyGenKind.COMPLEX),
        ("NON_PARTITION", KeyGenKind.NON_PARTITION),
        ("TIMESTAMP", KeyGenKind.TIMESTAMP),
        ("TIMESTAMP_AVRO", KeyGenKind.TIMESTAMP),
        ("COMPLEX_AVRO", KeyGenKind.COMPLEX),
        ("NON_PARTITION_AVRO", KeyGenKind.NON_PARTITION),
        ("CUSTOM_AVRO", KeyGenKind.CUSTOM),
        ("org.apache.hudi.keygen.SimpleKeyGenerator ", KeyGenKind.SIMPLE),
    ],
)
def test_kind_of_class_maps_hudi_class_names_and_v8_types(class_name, kind):
    assert kind_of_class(class_name) is kind


@pytest.mark.parametrize(
    "class_name",
    [
        "com.acme.MyKeyGenerator",
        "com.acme.SimpleKeyGenerator",
        "org.apache.hudi.keygen.FancyKeyGenerator",
        "Fancy",
        "",
    ],
)
def test_unknown_key_generator_class_is_a_config_error_listing_supported_classes(class_name):
    with pytest.raises(ConfigError, match=r"unknown key generator class.*SimpleKeyGenerator"):
        kind_of_class(class_name)


def test_kind_of_class_ignores_leading_blanks_like_trailing_ones():
    assert kind_of_class(" org.apache.hudi.keygen.SimpleKeyGenerator") is KeyGenKind.SIMPLE


def test_every_kind_names_a_hudi_class_that_maps_back_to_it():
    for kind in KeyGenKind:
        assert kind.class_name.startswith("org.apache.hudi.keygen.")
        assert kind_of_class(kind.class_name) is kind


def test_every_real_table_key_generator_builds_a_spec(hudi_tables):
    for name, root in hudi_tables.items():
        config = TableContext.open(str(root)).config
        kind = kind_of_class(config.key_generator_class)
        expected = next(k for word, k in REAL_KINDS.items() if word in name)
        assert kind is expected, name
        built = spec(
            config.key_generator_class,
            config.record_key_fields,
            ",".join(config.partition_fields),
            dict(config.props),
            hive_style=config.hive_style_partitioning,
        )
        assert built.partition_field_names == (
            config.partition_fields if kind is not KeyGenKind.NON_PARTITION else ()
        )
        assert built.hive_style is config.hive_style_partitioning


def test_real_timestamp_table_infers_date_string_from_its_persisted_formats(hudi_tables):
    config = TableContext.open(str(hudi_tables["cow__v6_timebasedkeygen_nonhivestyle"])).config
    built = spec(config.key_generator_class, config.record_key_fields, "ts_str", dict(config.props))
    assert built.partition_fields == (("ts_str", TIMESTAMP),)
    assert built.timestamp == TimestampOptions(
        timestamp_type="DATE_STRING",
        input_formats=("yyyy-MM-dd'T'HH:mm:ss.SSSZ",),
        output_format="yyyy/MM/dd/HH",
        input_timezone="UTC",
        output_timezone="UTC",
        scalar_unit="SECONDS",
    )


# ---- inference (Hudi 0.14 KeyGenUtils.inferKeyGeneratorType) ------------------------------------


@pytest.mark.parametrize(
    ("keys", "partitions", "kind"),
    [
        (("id",), None, KeyGenKind.NON_PARTITION),
        (("id",), "", KeyGenKind.NON_PARTITION),
        (("id",), " , ", KeyGenKind.NON_PARTITION),
        (("id",), "city", KeyGenKind.SIMPLE),
        (("id", "name"), "city", KeyGenKind.COMPLEX),
        (("id",), "a,b", KeyGenKind.COMPLEX),
        (("id",), "a:SIMPLE", KeyGenKind.CUSTOM),
    ],
)
def test_kind_is_inferred_from_key_and_partition_fields_when_no_class_is_given(
    keys, partitions, kind
):
    assert spec(None, keys, partitions).kind is kind


def test_partition_fields_are_trimmed_and_empty_parts_dropped():
    assert spec(None, ("id",), " a , b ,").partition_field_names == ("a", "b")


def test_non_partitioned_and_global_delete_ignore_partition_fields():
    assert (
        spec(
            "org.apache.hudi.keygen.NonpartitionedKeyGenerator", partitions="city"
        ).partition_fields
        == ()
    )
    assert (
        spec("org.apache.hudi.keygen.GlobalDeleteKeyGenerator", partitions="city").partition_fields
        == ()
    )


# ---- validation -----------------------------------------------------------------------------


def test_spec_needs_a_record_key_field():
    with pytest.raises(ConfigError, match=r"hoodie\.datasource\.write\.recordkey\.field"):
        spec(None, (), "city")


def test_simple_key_generator_needs_one_partition_field_and_one_key_field():
    with pytest.raises(ConfigError, match="exactly one partition"):
        spec("org.apache.hudi.keygen.SimpleKeyGenerator", partitions="a,b")
    with pytest.raises(ConfigError, match="exactly one partition"):
        spec("org.apache.hudi.keygen.SimpleKeyGenerator", partitions=None)
    with pytest.raises(ConfigError, match="one record key field"):
        spec("org.apache.hudi.keygen.SimpleKeyGenerator", ("a", "b"), "city")


def test_timestamp_key_generator_requires_its_options_naming_the_key():
    with pytest.raises(ConfigError, match=r"hoodie\.keygen\.timebased\.timestamp\.type"):
        spec("org.apache.hudi.keygen.TimestampBasedKeyGenerator", partitions="ts")
    with pytest.raises(ConfigError, match=r"hoodie\.keygen\.timebased\.output\.dateformat"):
        spec(
            "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
            partitions="ts",
            options={"hoodie.keygen.timebased.timestamp.type": "SCALAR"},
        )
    with pytest.raises(ConfigError, match=r"hoodie\.keygen\.timebased\.input\.dateformat"):
        spec(
            "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
            partitions="ts",
            options={**TIMESTAMP_OPTIONS, "hoodie.keygen.timebased.timestamp.type": "DATE_STRING"},
        )


def test_timestamp_options_split_input_formats_and_default_time_zones():
    options = {
        "hoodie.keygen.timebased.timestamp.type": "MIXED",
        "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd|yyyyMMdd",
        "hoodie.keygen.timebased.input.dateformat.list.delimiter.regex": "|",
        "hoodie.keygen.timebased.output.dateformat": "yyyy",
        "hoodie.keygen.timebased.timezone": "Asia/Tokyo",
        "hoodie.keygen.timebased.output.timezone": "UTC",
    }
    parsed = TimestampOptions.from_options(options)
    assert parsed.input_formats == ("yyyy-MM-dd", "yyyyMMdd")
    assert (parsed.input_timezone, parsed.output_timezone) == ("Asia/Tokyo", "UTC")


def test_unknown_timestamp_type_is_a_config_error():
    with pytest.raises(ConfigError, match=r"hoodie\.keygen\.timebased\.timestamp\.type"):
        TimestampOptions.from_options(
            {**TIMESTAMP_OPTIONS, "hoodie.keygen.timebased.timestamp.type": "WEEKS"}
        )


# ---- Custom key generator `field:TYPE` ----------------------------------------------------------


def test_custom_partition_fields_parse_type_suffixes_case_insensitively():
    built = spec(
        "org.apache.hudi.keygen.CustomKeyGenerator",
        partitions="region:simple, ts : TIMESTAMP",
        options=TIMESTAMP_OPTIONS,
    )
    assert built.kind is KeyGenKind.CUSTOM
    assert built.partition_fields == (("region", SIMPLE), ("ts", TIMESTAMP))
    assert built.timestamp is not None and built.timestamp.timestamp_type == "EPOCHMILLISECONDS"
    assert built.partition_fields_property == "region,ts"


def test_custom_with_only_simple_fields_needs_no_timestamp_options():
    built = spec("org.apache.hudi.keygen.CustomKeyGenerator", partitions="a:SIMPLE,b:SIMPLE")
    assert built.timestamp is None and built.partition_field_names == ("a", "b")


def test_custom_field_without_type_is_a_config_error():
    with pytest.raises(ConfigError, match="field:SIMPLE"):
        spec("org.apache.hudi.keygen.CustomKeyGenerator", partitions="a")


def test_custom_field_with_unknown_type_is_a_config_error():
    with pytest.raises(ConfigError, match="'HASH'"):
        spec("org.apache.hudi.keygen.CustomKeyGenerator", partitions="a:HASH")


def test_custom_without_partition_fields_is_non_partitioned():
    assert spec("org.apache.hudi.keygen.CustomKeyGenerator", partitions="").is_partitioned is False


def test_type_suffixes_are_dropped_for_simple_and_complex_generators():
    assert spec(
        "org.apache.hudi.keygen.ComplexKeyGenerator", partitions="a:SIMPLE,b"
    ).partition_fields == (
        ("a", SIMPLE),
        ("b", SIMPLE),
    )


# ---- record key shape -----------------------------------------------------------------------


def test_complex_record_keys_for_complex_global_delete_and_several_fields():
    assert spec("org.apache.hudi.keygen.ComplexKeyGenerator", ("id",), "a").uses_complex_record_key
    assert spec("org.apache.hudi.keygen.GlobalDeleteKeyGenerator", ("id",)).uses_complex_record_key
    assert spec(None, ("id", "name")).uses_complex_record_key
    assert not spec(None, ("id",), "a").uses_complex_record_key
    assert not spec(None, ("id",)).uses_complex_record_key


def test_spec_carries_hive_style_and_url_encoding_flags():
    built = spec(None, ("id",), "a", hive_style=True, url_encode=True)
    assert built.hive_style and built.url_encode and built.is_partitioned
