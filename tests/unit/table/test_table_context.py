"""`pyhudi.table.context.TableContext`: creating, opening and updating `hoodie.properties`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pyhudi.codec.properties import (
    dump_properties,
    load_partition_metadata,
    load_properties,
    table_checksum,
)
from pyhudi.exceptions import (
    CorruptFileError,
    TableExistsError,
    TableNotFoundError,
    UnsupportedVersionError,
)
from pyhudi.model.enums import BaseFileFormat, TableType
from pyhudi.table.config import TableConfig, hudi_release
from pyhudi.table.context import TableContext
from pyhudi.table.layout import remove_partition_left_empty


def table_props(name: str = "trips", **extra: str) -> dict[str, str]:
    props = {
        "hoodie.table.name": name,
        "hoodie.database.name": "default",
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.version": "6",
        "hoodie.timeline.layout.version": "1",
        "hoodie.table.recordkey.fields": "uuid",
        "hoodie.table.partition.fields": "city",
        "hoodie.table.precombine.field": "ts",
        "hoodie.table.timeline.timezone": "UTC",
    }
    props.update(extra)
    return props


def read_props(root: Path) -> dict[str, str]:
    return load_properties((root / ".hoodie" / "hoodie.properties").read_bytes())


def write_props(root: Path, props: dict[str, str]) -> None:
    (root / ".hoodie").mkdir(parents=True, exist_ok=True)
    (root / ".hoodie" / "hoodie.properties").write_bytes(dump_properties(props))


# ---- create ----------------------------------------------------------------------------------


def test_create_writes_properties_with_checksum_and_hudi_folders(tmp_path):
    root = tmp_path / "trips"
    ctx = TableContext.create(str(root), table_props())
    props = read_props(root)
    assert props["hoodie.table.checksum"] == str(table_checksum("trips", "default"))
    assert {k: v for k, v in props.items() if k != "hoodie.table.checksum"} == table_props()
    for folder in (
        ".schema",
        ".temp",
        ".aux",
        ".aux/.bootstrap/.partitions",
        ".aux/.bootstrap/.fileids",
        "archived",
    ):
        assert (root / ".hoodie" / folder).is_dir(), folder
    assert ctx.config.name == "trips" and ctx.config.table_type is TableType.MERGE_ON_READ
    assert len(ctx.active.timeline) == 0
    assert ctx.base_path == str(root)


def test_create_uses_the_configured_archive_folder(tmp_path):
    TableContext.create(str(tmp_path), table_props(**{"hoodie.archivelog.folder": "history"}))
    assert (tmp_path / ".hoodie" / "history").is_dir()


def test_create_refuses_an_existing_table(tmp_path):
    TableContext.create(str(tmp_path), table_props())
    before = (tmp_path / ".hoodie" / "hoodie.properties").read_bytes()
    with pytest.raises(TableExistsError):
        TableContext.create(str(tmp_path), table_props(name="other"))
    assert (tmp_path / ".hoodie" / "hoodie.properties").read_bytes() == before


def test_created_table_exists_and_reopens_with_same_config(tmp_path):
    assert not TableContext.exists(str(tmp_path))
    created = TableContext.create(str(tmp_path), table_props())
    assert TableContext.exists(str(tmp_path)) and TableContext.exists(f"file://{tmp_path}")
    opened = TableContext.open(f"file://{tmp_path}")
    assert opened.config == created.config
    assert opened.uri == f"file://{tmp_path}"


def test_create_without_database_uses_empty_database_in_checksum(tmp_path):
    props = table_props()
    del props["hoodie.database.name"]
    TableContext.create(str(tmp_path), props)
    assert read_props(tmp_path)["hoodie.table.checksum"] == str(table_checksum("trips", None))


# ---- open --------------------------------------------------------------------------------------


def test_open_reads_every_real_table(hudi_tables):
    for name, root in hudi_tables.items():
        ctx = TableContext.open(str(root))
        assert ctx.config.version in (6, 8, 9), name
        assert ctx.active.layout_version == (2 if ctx.config.version >= 8 else 1), name
        assert ctx.config.is_merge_on_read is name.startswith("mor_"), name
        expected_format = BaseFileFormat.LANCE if "_lance_" in name else BaseFileFormat.PARQUET
        assert ctx.config.base_file_format is expected_format, name


def test_open_plain_folder_raises_table_not_found(tmp_path):
    (tmp_path / "data.parquet").write_bytes(b"PAR1")
    with pytest.raises(TableNotFoundError, match=r"hoodie\.properties"):
        TableContext.open(str(tmp_path))
    with pytest.raises(TableNotFoundError):
        TableContext.open(str(tmp_path / "missing"))
    assert issubclass(TableNotFoundError, FileNotFoundError)


def test_open_table_version_5_raises_unsupported_version(tmp_path):
    write_props(tmp_path, table_props(**{"hoodie.table.version": "5"}))
    with pytest.raises(UnsupportedVersionError, match=r"hoodie\.table\.version=5"):
        TableContext.open(str(tmp_path))


def test_open_properties_without_version_is_version_0_and_unsupported(tmp_path):
    props = table_props()
    del props["hoodie.table.version"]
    write_props(tmp_path, props)
    with pytest.raises(UnsupportedVersionError):
        TableContext.open(str(tmp_path))


def test_open_rejects_wrong_checksum(tmp_path):
    write_props(tmp_path, table_props(**{"hoodie.table.checksum": "12345"}))
    with pytest.raises(CorruptFileError, match="checksum"):
        TableContext.open(str(tmp_path))


def test_open_accepts_properties_without_checksum(tmp_path):
    write_props(tmp_path, table_props())
    assert TableContext.open(str(tmp_path)).config.name == "trips"


def test_open_falls_back_to_the_backup_properties(tmp_path):
    TableContext.create(str(tmp_path), table_props())
    hoodie = tmp_path / ".hoodie"
    (hoodie / "hoodie.properties").rename(hoodie / "hoodie.properties.backup")
    assert TableContext.exists(str(tmp_path))
    assert TableContext.open(str(tmp_path)).config.name == "trips"


@pytest.mark.parametrize(
    ("name", "release"),
    [("cow__v8_nonpartitioned", "Hudi 1.0"), ("cow__v9_txns_nonpart_meta", "Hudi 1.1")],
)
def test_v8_and_v9_tables_are_writable(hudi_tables, name, release):
    root = hudi_tables[name]
    ctx = TableContext.open(str(root))
    for what in ("write", "compaction", "clustering", "clean", "bootstrap", "restore"):
        ctx.config.check_writable(str(root), what)
    assert release in hudi_release(ctx.config.version)


@pytest.mark.parametrize(
    ("version", "release"), [(5, "Hudi 0.12/0.13"), (7, "Hudi 0.16"), (10, "newer than 1.1")]
)
def test_unreadable_version_error_names_version_release_and_supported_ones(
    tmp_path, version, release
):
    write_props(tmp_path, table_props(**{"hoodie.table.version": str(version)}))
    with pytest.raises(UnsupportedVersionError) as caught:
        TableContext.open(str(tmp_path)).config.check_readable(str(tmp_path))
    message = str(caught.value)
    assert f"hoodie.table.version={version}" in message and release in message
    assert "6 (Hudi 0.14/0.15), 8 (Hudi 1.0), 9 (Hudi 1.1)" in message


def test_v6_table_is_writable(hudi_tables):
    root = hudi_tables["cow__v6_nonpartitioned"]
    TableContext.open(str(root)).config.check_writable(str(root))


# ---- update_properties ----------------------------------------------------------------------


def test_update_properties_rewrites_file_and_removes_backup(tmp_path):
    ctx = TableContext.create(str(tmp_path), table_props())
    ctx.update_properties(
        {"hoodie.table.metadata.partitions": "", "hoodie.table.precombine.field": None}
    )
    hoodie = tmp_path / ".hoodie"
    assert not (hoodie / "hoodie.properties.backup").exists()
    props = read_props(tmp_path)
    assert props["hoodie.table.metadata.partitions"] == ""
    assert "hoodie.table.precombine.field" not in props
    assert props["hoodie.table.checksum"] == str(table_checksum("trips", "default"))
    assert (hoodie / "hoodie.properties").read_bytes().startswith(b"#Updated at ")
    assert ctx.config.precombine_field is None
    assert TableContext.open(str(tmp_path)).config == ctx.config


def test_update_properties_recomputes_checksum_when_name_changes(tmp_path):
    ctx = TableContext.create(str(tmp_path), table_props())
    ctx.update_properties({"hoodie.table.name": "renamed"})
    assert read_props(tmp_path)["hoodie.table.checksum"] == str(
        table_checksum("renamed", "default")
    )
    assert TableContext.open(str(tmp_path)).config.name == "renamed"


def test_update_properties_of_a_real_table_keeps_it_readable(hudi_tables, tmp_path):
    root = tmp_path / "t"
    shutil.copytree(hudi_tables["mor_avro__v6_trips_8i1u"], root)
    ctx = TableContext.open(str(root))
    before = dict(ctx.config.props)
    ctx.update_properties({"hoodie.table.cdc.enabled": "false"})
    after = read_props(root)
    assert after == {**before, "hoodie.table.cdc.enabled": "false"}
    assert TableContext.open(str(root)).config.props == after


# ---- helpers of the context -----------------------------------------------------------------


def test_ensure_partition_metadata_writes_once_with_depth(tmp_path):
    ctx = TableContext.create(str(tmp_path), table_props())
    ctx.ensure_partition_metadata("a=1/b=2", "20240101000000000")
    ctx.ensure_partition_metadata("a=1/b=2", "20240202000000000")
    ctx.ensure_partition_metadata("", "20240101000000000")
    marker = tmp_path / "a=1" / "b=2" / ".hoodie_partition_metadata"
    assert load_partition_metadata(marker.read_bytes()) == ("20240101000000000", 2)
    assert load_partition_metadata((tmp_path / ".hoodie_partition_metadata").read_bytes()) == (
        "20240101000000000",
        0,
    )


def test_a_partition_left_with_only_its_metafile_is_removed_with_its_empty_parents(tmp_path):
    ctx = TableContext.create(str(tmp_path), table_props())
    for partition in ("2024/01/02", "2024/01/03"):
        ctx.ensure_partition_metadata(partition, "20240101000000000")
    (tmp_path / "2024" / "01" / "03" / "data.parquet").write_bytes(b"x")
    assert remove_partition_left_empty(ctx.storage, ctx.base_path, "2024/01/02")
    assert not (tmp_path / "2024" / "01" / "02").exists()
    assert (tmp_path / "2024" / "01" / "03" / ".hoodie_partition_metadata").exists()
    assert not remove_partition_left_empty(ctx.storage, ctx.base_path, "2024/01/03")  # has data
    (tmp_path / "2024" / "01" / "03" / "data.parquet").unlink()
    assert remove_partition_left_empty(ctx.storage, ctx.base_path, "2024/01/03")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".hoodie"]
    assert not remove_partition_left_empty(ctx.storage, ctx.base_path, "")  # never the root


def test_paths_of_the_context(tmp_path):
    ctx = TableContext.create(str(tmp_path), table_props())
    assert ctx.path("") == str(tmp_path)
    assert ctx.partition_path("city=sf") == f"{tmp_path}/city=sf"
    assert ctx.marker_folder("20240101000000000") == f"{tmp_path}/.hoodie/.temp/20240101000000000"


def test_new_instant_time_of_context_is_after_its_timeline(tmp_path):
    ctx = TableContext.create(str(tmp_path), table_props())
    first = ctx.new_instant_time()
    assert first > "20240101000000000" and ctx.new_instant_time() > first


def test_table_config_defaults_and_derived_values():
    config = TableConfig({"hoodie.table.name": "t", "hoodie.table.version": "8"})
    assert config.table_type is TableType.COPY_ON_WRITE
    assert config.timeline_layout_version == 2
    assert config.record_key_fields == () and config.partition_fields == ()
    assert config.populate_meta_fields and not config.hive_style_partitioning
    assert config.archivelog_folder == "archived"
    assert not config.timeline_timezone_utc  # Hudi's default is LOCAL
    keyed = TableConfig(
        {"hoodie.table.keygenerator.type": "SIMPLE", "hoodie.table.ordering.fields": "ts"}
    )
    assert (keyed.key_generator_class, keyed.precombine_field) == ("SIMPLE", "ts")
    assert TableConfig({"hoodie.table.partition.fields": " a , b ,"}).partition_fields == ("a", "b")


def test_a_non_native_table_format_is_refused_naming_the_property(tmp_path):
    props = table_props(**{"hoodie.table.version": "9", "hoodie.table.format": "iceberg"})
    write_props(tmp_path, props)
    with pytest.raises(UnsupportedVersionError, match=r"hoodie.table.format=iceberg"):
        TableContext.open(str(tmp_path))


def test_bootstrap_index_is_decoded_again_when_the_file_is_replaced(tmp_path: Path):
    import os

    from pyhudi.codec.bootstrap_index import (
        FILEIDS_FOLDER,
        INDEX_FILE_NAME,
        SourceFile,
        encode_index,
    )

    ctx = TableContext.create(
        str(tmp_path / "t"), table_props(**{"hoodie.bootstrap.base.path": "file:/src"})
    )
    index = Path(ctx.path(f"{FILEIDS_FOLDER}/{INDEX_FILE_NAME}"))
    index.parent.mkdir(parents=True, exist_ok=True)

    def write(file_id: str, name: str, mtime_s: int) -> None:
        source = SourceFile("sf", "city=sf", file_id, f"file:/src/city=sf/{name}", 10, 0)
        index.write_bytes(encode_index([source], "file:/src")[1])
        os.utime(index, (mtime_s, mtime_s))

    write("fg-1", "a.parquet", 1_000)
    assert ctx.bootstrap_sources() == {("sf", "fg-1"): "file:/src/city=sf/a.parquet"}
    assert ctx.bootstrap_sources() == {("sf", "fg-1"): "file:/src/city=sf/a.parquet"}  # cached
    write("fg-2", "b.parquet", 2_000)  # the same size, another file
    assert ctx.bootstrap_sources() == {("sf", "fg-2"): "file:/src/city=sf/b.parquet"}
