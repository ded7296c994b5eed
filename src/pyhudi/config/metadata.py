"""Metadata-table options (Hudi's `HoodieMetadataConfig`) and the metadata table's own properties."""

from __future__ import annotations

from pyhudi.config.options import boolean

METADATA_ENABLE = boolean(
    "hoodie.metadata.enable",
    False,
    "Maintain the metadata table's `files` partition inside every write. pyhudi's default is "
    "false (Hudi's is true); a table that has a metadata table keeps it unless this is false, "
    "which deletes it.",
)

#: `hoodie.properties` of a metadata table (Hudi 0.14 `HoodieBackedTableMetadataWriter
#: .initializeMetaClient`, table version 6): everything but the table name and the checksum.
METADATA_TABLE_NAME_SUFFIX = "_metadata"
METADATA_PAYLOAD_CLASS = "org.apache.hudi.metadata.HoodieMetadataPayload"
METADATA_KEY_GENERATOR_CLASS = "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator"
METADATA_RECORD_KEY_FIELD = "key"
