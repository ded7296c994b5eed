"""Key generator specs: which fields make the record key and partition path, and how (§1.10).

Table config is data: Hudi key generator class names map to built-in kinds; an unknown class is a
`ConfigError`, never an import. The Spark expressions live in `pyhudi.keygen.spark`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from pyhudi.config import keygen as keygen_keys
from pyhudi.config import write as write_keys
from pyhudi.exceptions import ConfigError
from pyhudi.table.config import TableConfig
from pyhudi.table.write_defaults import with_table_defaults

NULL_RECORDKEY_PLACEHOLDER = "__null__"
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"
DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"


class KeyGenKind(str, Enum):
    SIMPLE = "SIMPLE"
    COMPLEX = "COMPLEX"
    NON_PARTITION = "NON_PARTITION"
    TIMESTAMP = "TIMESTAMP"
    CUSTOM = "CUSTOM"
    GLOBAL_DELETE = "GLOBAL_DELETE"

    @property
    def class_name(self) -> str:
        return _CLASS_NAMES[self]


_CLASS_NAMES = {
    KeyGenKind.SIMPLE: "org.apache.hudi.keygen.SimpleKeyGenerator",
    KeyGenKind.COMPLEX: "org.apache.hudi.keygen.ComplexKeyGenerator",
    KeyGenKind.NON_PARTITION: "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
    KeyGenKind.TIMESTAMP: "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
    KeyGenKind.CUSTOM: "org.apache.hudi.keygen.CustomKeyGenerator",
    KeyGenKind.GLOBAL_DELETE: "org.apache.hudi.keygen.GlobalDeleteKeyGenerator",
}
_BY_SIMPLE_NAME = {
    "SimpleKeyGenerator": KeyGenKind.SIMPLE,
    "SimpleAvroKeyGenerator": KeyGenKind.SIMPLE,
    "ComplexKeyGenerator": KeyGenKind.COMPLEX,
    "ComplexAvroKeyGenerator": KeyGenKind.COMPLEX,
    "NonpartitionedKeyGenerator": KeyGenKind.NON_PARTITION,
    "NonpartitionedAvroKeyGenerator": KeyGenKind.NON_PARTITION,
    "TimestampBasedKeyGenerator": KeyGenKind.TIMESTAMP,
    "TimestampBasedAvroKeyGenerator": KeyGenKind.TIMESTAMP,
    "CustomKeyGenerator": KeyGenKind.CUSTOM,
    "CustomAvroKeyGenerator": KeyGenKind.CUSTOM,
    "GlobalDeleteKeyGenerator": KeyGenKind.GLOBAL_DELETE,
}


def kind_of_class(class_name: str) -> KeyGenKind:
    """The built-in kind of a Hudi key generator class name (or a v8 `keygenerator.type`)."""
    class_name = class_name.strip()
    simple = class_name.rsplit(".", 1)[-1]
    if (
        class_name.startswith(("org.apache.hudi.keygen.", "org.apache.hudi."))
        or "." not in class_name
    ):
        if simple in _BY_SIMPLE_NAME:
            return _BY_SIMPLE_NAME[simple]
        # Hudi 1.x `KeyGeneratorType` names; SIMPLE_AVRO etc. are the same generators.
        type_name = simple.upper().removesuffix("_AVRO")
        if type_name in KeyGenKind.__members__:
            return KeyGenKind(type_name)
    raise ConfigError(
        f"unknown key generator class {class_name!r}; pyhudi supports "
        + ", ".join(sorted({k.class_name for k in KeyGenKind}))
    )


class PartitionFieldType(str, Enum):
    SIMPLE = "SIMPLE"
    TIMESTAMP = "TIMESTAMP"


@dataclass(frozen=True)
class TimestampOptions:
    timestamp_type: str
    input_formats: tuple[str, ...]
    output_format: str
    input_timezone: str
    output_timezone: str
    scalar_unit: str

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> TimestampOptions:
        timestamp_type = keygen_keys.TIMESTAMP_TYPE.get(options)
        if timestamp_type is None and keygen_keys.INPUT_DATE_FORMAT.get(options):
            # Hudi 0.14 does not persist the type in hoodie.properties, only the formats; an input
            # date format means the values are date strings.
            timestamp_type = "DATE_STRING"
        if timestamp_type is None:
            raise ConfigError(
                f"{keygen_keys.TIMESTAMP_TYPE.key} is required by the TimestampBased key generator"
            )
        output_format = keygen_keys.OUTPUT_DATE_FORMAT.get(options)
        if not output_format:
            raise ConfigError(
                f"{keygen_keys.OUTPUT_DATE_FORMAT.key} is required by the TimestampBased key generator"
            )
        formats = tuple(
            f
            for f in keygen_keys.INPUT_DATE_FORMAT.get(options).split(
                keygen_keys.INPUT_DATE_FORMAT_DELIMITER.get(options)
            )
            if f
        )
        if timestamp_type in ("DATE_STRING", "MIXED") and not formats:
            raise ConfigError(
                f"{keygen_keys.INPUT_DATE_FORMAT.key} is required for {timestamp_type} timestamps"
            )
        zone = keygen_keys.TIMEZONE.get(options) or "UTC"
        return cls(
            timestamp_type=timestamp_type,
            input_formats=formats,
            output_format=output_format,
            input_timezone=keygen_keys.INPUT_TIMEZONE.get(options) or zone,
            output_timezone=keygen_keys.OUTPUT_TIMEZONE.get(options) or zone,
            scalar_unit=keygen_keys.SCALAR_TIME_UNIT.get(options),
        )


@dataclass(frozen=True)
class KeyGenSpec:
    kind: KeyGenKind
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[tuple[str, PartitionFieldType], ...]
    hive_style: bool = False
    url_encode: bool = False
    timestamp: TimestampOptions | None = None

    @property
    def partition_field_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.partition_fields)

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_fields)

    @property
    def uses_complex_record_key(self) -> bool:
        """`f1:v1,f2:v2` keys (Complex and GlobalDelete always; others with several key fields)."""
        if self.kind in (KeyGenKind.COMPLEX, KeyGenKind.GLOBAL_DELETE):
            return True
        return len(self.record_key_fields) > 1

    @property
    def partition_fields_property(self) -> str:
        """`hoodie.table.partition.fields` as Hudi records it (Custom keeps the `:type` suffixes off)."""
        return ",".join(self.partition_field_names)


def build_spec(
    *,
    class_name: str | None,
    record_key_fields: tuple[str, ...],
    partition_spec: str | None,
    hive_style: bool,
    url_encode: bool,
    options: Mapping[str, str],
) -> KeyGenSpec:
    """Resolve the key generator from the class (or infer it as Hudi 0.14 does) and the fields."""
    raw_parts = tuple(p.strip() for p in (partition_spec or "").split(",") if p.strip())
    kind = kind_of_class(class_name) if class_name else _infer_kind(record_key_fields, raw_parts)
    if not record_key_fields:
        raise ConfigError("hoodie.datasource.write.recordkey.field must name at least one field")
    if kind in (KeyGenKind.NON_PARTITION, KeyGenKind.GLOBAL_DELETE):
        partition_fields: tuple[tuple[str, PartitionFieldType], ...] = ()
    elif kind is KeyGenKind.CUSTOM:
        partition_fields = tuple(_custom_field(p) for p in raw_parts)
    elif kind is KeyGenKind.TIMESTAMP:
        partition_fields = tuple((p.split(":")[0], PartitionFieldType.TIMESTAMP) for p in raw_parts)
    else:
        partition_fields = tuple((p.split(":")[0], PartitionFieldType.SIMPLE) for p in raw_parts)
    if kind in (KeyGenKind.SIMPLE, KeyGenKind.TIMESTAMP) and len(partition_fields) != 1:
        raise ConfigError(f"the {kind.value} key generator needs exactly one partition path field")
    if kind is KeyGenKind.SIMPLE and len(record_key_fields) != 1:
        raise ConfigError(
            "the SIMPLE key generator takes one record key field; use ComplexKeyGenerator"
        )
    needs_timestamp = any(t is PartitionFieldType.TIMESTAMP for _, t in partition_fields)
    return KeyGenSpec(
        kind=kind,
        record_key_fields=record_key_fields,
        partition_fields=partition_fields,
        hive_style=hive_style,
        url_encode=url_encode,
        timestamp=TimestampOptions.from_options(options) if needs_timestamp else None,
    )


def _infer_kind(record_key_fields: tuple[str, ...], partition_parts: tuple[str, ...]) -> KeyGenKind:
    if not partition_parts:
        return KeyGenKind.NON_PARTITION
    if any(":" in p for p in partition_parts):
        return KeyGenKind.CUSTOM
    if len(record_key_fields) == 1 and len(partition_parts) == 1:
        return KeyGenKind.SIMPLE
    return KeyGenKind.COMPLEX


def _custom_field(part: str) -> tuple[str, PartitionFieldType]:
    if ":" not in part:
        raise ConfigError(
            f"CustomKeyGenerator partition fields are `field:SIMPLE` or `field:TIMESTAMP`, got {part!r}"
        )
    name, field_type = part.split(":", 1)
    try:
        return name.strip(), PartitionFieldType(field_type.strip().upper())
    except ValueError:
        raise ConfigError(
            f"unknown CustomKeyGenerator partition type {field_type!r} (SIMPLE or TIMESTAMP)"
        ) from None


def spec_from_options(o: Mapping[str, str]) -> KeyGenSpec:
    """The key generator of write options (`hoodie.datasource.write.*`, `hoodie.keygen.*`)."""
    class_name = write_keys.KEY_GENERATOR_CLASS.get(o)
    key_type = write_keys.KEY_GENERATOR_TYPE.get(o)
    if not class_name and key_type:
        class_name = KeyGenKind(key_type).class_name
    record_keys = tuple(
        f.strip() for f in write_keys.RECORD_KEY_FIELD.get(o).split(",") if f.strip()
    )
    return build_spec(
        class_name=class_name,
        record_key_fields=record_keys,
        partition_spec=write_keys.PARTITION_PATH_FIELD.get(o),
        hive_style=write_keys.HIVE_STYLE_PARTITIONING.get(o),
        url_encode=write_keys.URL_ENCODE_PARTITIONING.get(o),
        options=o,
    )


def table_keygen_spec(table: TableConfig) -> KeyGenSpec:
    """The key generator an existing table's writers use (from its `hoodie.properties`)."""
    return spec_from_options(with_table_defaults({}, table))
