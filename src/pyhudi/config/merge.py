"""Table properties that decide how records merge, as Hudi 1.x (table versions 8 and 9) records them.

Table version 6 keeps only `hoodie.compaction.payload.class` and `hoodie.table.precombine.field`
(in `config/table.py`); version 8 adds the merge mode and strategy id and, as Hudi 1.2 writes it,
`hoodie.table.ordering.fields` (one field or several); version 9 (Hudi 1.1) adds the legacy payload
class, partial update modes and the key generator type. The write option choosing a new table's
merge mode is `hoodie.write.record.merge.mode` (`config/write.py`).
"""

from __future__ import annotations

from pyhudi.config.options import choice, string

RECORD_MERGE_MODE = choice(
    "hoodie.record.merge.mode",
    None,
    ("COMMIT_TIME_ORDERING", "EVENT_TIME_ORDERING", "CUSTOM"),
    "How two versions of a record merge (v8+); pyhudi reads and writes COMMIT_TIME_ORDERING "
    "and EVENT_TIME_ORDERING, CUSTOM is an error. A new table's mode is chosen with "
    "hoodie.write.record.merge.mode; given to a write, this key must equal the table's mode.",
)
RECORD_MERGE_STRATEGY_ID = string(
    "hoodie.record.merge.strategy.id",
    None,
    "Record merge strategy id (v8+): the event-time, commit-time, custom or payload-based merger.",
)
ORDERING_FIELDS = string(
    "hoodie.table.ordering.fields",
    None,
    "Comma-separated ordering fields, compared as a tuple in that order (tables of version 8 "
    "and 9; a write takes it before hoodie.datasource.write.precombine.field). Version 6: "
    "hoodie.table.precombine.field, one field.",
)
LEGACY_PAYLOAD_CLASS = string(
    "hoodie.table.legacy.payload.class",
    None,
    "Payload class a v9 table was created with (informational; the merge mode decides).",
)
PARTIAL_UPDATE_MODE = choice(
    "hoodie.table.partial.update.mode",
    "NONE",
    ("NONE", "IGNORE_DEFAULTS", "FILL_UNAVAILABLE", "IGNORE_MARKERS", "KEEP_VALUES"),
    "Partial updates (v9); pyhudi reads NONE only.",
)
KEY_GENERATOR_TYPE = string(
    "hoodie.table.keygenerator.type",
    None,
    "Key generator by type name (v8+): SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM, ...",
)
#: Prefix of the extra merge properties Hudi 1.1 sets for payloads it migrated (AWS DMS, Debezium).
RECORD_MERGE_PROPERTY_PREFIX = "hoodie.record.merge.property."

#: `HoodieRecordMerger` strategy ids (Hudi 1.x).
EVENT_TIME_STRATEGY_ID = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
COMMIT_TIME_STRATEGY_ID = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
