"""Properties of metadata records: what is written is read back, and folding `files` records in
order gives the set semantics Hudi's payload promises (last add/delete of a name wins; sizes grow)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pyhudi.codec.metadata_hfile import file_list_record, write_metadata_hfile
from pyhudi.codec.metadata_records import (
    MetadataRecord,
    MetadataRecordType,
    RecordLocation,
    iter_hfile_records,
    merge_records,
)

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
partitions = st.sampled_from(["", "p=1", "a/b/c", "région=é"])
#: one action on a partition: files added (name -> size) and names deleted
actions = st.tuples(
    partitions,
    st.dictionaries(names, st.integers(1, 2**40), max_size=6),
    st.lists(names, max_size=4),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(actions, max_size=8), st.booleans())
def test_files_records_read_back_as_written(steps, base_file) -> None:
    by_key: dict[str, MetadataRecord] = {}
    for partition, added, deleted in steps:
        record = file_list_record(partition, added, [d for d in deleted if d not in added])
        by_key[record.key] = record
    data = write_metadata_hfile(by_key.values(), base_file_name="f.hfile" if base_file else None)
    assert {r.key: r for r in iter_hfile_records(data)} == by_key


@settings(max_examples=120, deadline=None)
@given(st.lists(actions, min_size=1, max_size=12))
def test_folding_file_lists_keeps_the_last_add_or_delete_of_each_name(steps) -> None:
    merged: dict[str, MetadataRecord] = {}
    expected: dict[str, dict[str, int]] = {}
    for partition, added, deleted in steps:
        deleted = [d for d in deleted if d not in added]
        record = file_list_record(partition, added, deleted)
        previous = merged.get(record.key)
        merged[record.key] = record if previous is None else merge_records(previous, record)
        live = expected.setdefault(record.key, {})
        for name, size in added.items():
            live[name] = max(size, live.get(name, 0))
        for name in deleted:
            live.pop(name, None)
    assert {k: r.live_files for k, r in merged.items()} == expected


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        names,
        st.tuples(st.uuids(), st.integers(-1, 1000), st.integers(0, 2**41), partitions),
        max_size=20,
    )
)
def test_record_index_entries_read_back(entries) -> None:
    records = [
        MetadataRecord(
            key,
            MetadataRecordType.RECORD_INDEX,
            location=RecordLocation(part, f"{u}" if index < 0 else f"{u}-{index}", ms),
        )
        for key, (u, index, ms, part) in entries.items()
    ]
    decoded = {r.key: r for r in iter_hfile_records(write_metadata_hfile(records))}
    assert decoded == {r.key: r for r in records}
