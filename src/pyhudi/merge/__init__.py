"""How two versions of a record merge: `config` (merge modes, payload classes, a table's merge
mode and ordering fields), `ordering` (the event-time rule, in Arrow and in Spark) and
`record_merger` (log records resolved per key and overlaid on base records, in Arrow)."""
