"""`pyhudi.HudiTable`'s public surface is one consistent shape: typed returns, `HudiError`s, the
same read arguments as `pyhudi.read_arrow`, and the four table services as namespaces alike."""

from __future__ import annotations

import pytest
from tests.helpers.fixtures import unzip_table

import pyhudi
from pyhudi.model.enums import TableType


@pytest.fixture
def table(tmp_path):  # type: ignore[no-untyped-def]
    return pyhudi.HudiTable(str(unzip_table("cow__v6_simplekeygen_nonhivestyle", tmp_path)))


def test_table_type_is_the_enum_and_still_compares_as_its_name(table):  # type: ignore[no-untyped-def]
    assert table.table_type is TableType.COPY_ON_WRITE
    assert table.table_type == "COPY_ON_WRITE"
    assert "COPY_ON_WRITE" in repr(table) and "TableType" not in repr(table)


def test_an_unknown_instant_is_a_hudi_error_that_is_also_a_key_error(table):  # type: ignore[no-untyped-def]
    with pytest.raises(pyhudi.InstantNotFoundError) as raised:
        table.commit_metadata("20000101000000000")
    assert isinstance(raised.value, pyhudi.HudiError) and isinstance(raised.value, KeyError)
    assert str(raised.value).startswith("no completed commit 20000101000000000 in ")


def test_to_arrow_takes_what_read_arrow_takes(table):  # type: ignore[no-untyped-def]
    partition = table.partitions()[0]
    column = table.schema().names[-1]
    filters = [(column, "=", partition)]
    ours = table.to_arrow(filters=filters, columns=["_hoodie_record_key"])
    theirs = pyhudi.read_arrow(table.path, filters=filters, columns=["_hoodie_record_key"])
    assert ours.column_names == ["_hoodie_record_key"] and ours.equals(theirs)
    assert 0 < ours.num_rows < table.to_arrow().num_rows


def test_the_four_services_have_one_shape(table):  # type: ignore[no-untyped-def]
    services = [table.compaction, table.clustering, table.clean, table.archive]
    for service in services:
        assert callable(service) and service.__call__ == service.run
    for service in services[:3]:  # the services that write a plan first
        assert service.pending() == []
        assert callable(service.schedule)
    assert table.archive.archived() == table.archived_timeline()
    assert not hasattr(table, "context")  # the internal TableContext is not public


def test_clean_runs_through_its_namespace_and_called(table):  # type: ignore[no-untyped-def]
    keep_one = {
        "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
        "hoodie.cleaner.fileversions.retained": "1",
    }
    before = sum(len(group.slices) for group in table.file_groups())
    result = table.clean(keep_one)
    assert result is not None and result.files_deleted > 0
    assert (
        sum(len(g.slices) for g in table.refresh().file_groups()) == before - result.files_deleted
    )
    assert table.clean.run(keep_one) is None  # nothing left to clean
