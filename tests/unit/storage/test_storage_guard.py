"""The table-root guard: a table's storage never creates or deletes outside the table."""

from __future__ import annotations

import pytest

from pyhudi.exceptions import HudiError, UnsafePathError
from pyhudi.storage import Storage
from pyhudi.storage.guard import is_inside
from pyhudi.table.context import TableContext


@pytest.mark.parametrize(
    ("path", "inside"),
    [
        ("/data/t", True),
        ("/data/t/p/f.parquet", True),
        ("/data/t/a/../b", True),
        ("/data/t/../escape", False),
        ("/data/t/a/../../escape", False),
        ("/data/tx/f", False),
        ("/somewhere", False),
        ("/data", False),
        ("bucket/t/x", False),
    ],
)
def test_is_inside_normalises_then_compares_prefixes(path: str, inside: bool) -> None:
    assert is_inside("/data/t", path) is inside


def test_object_store_roots_without_leading_slash() -> None:
    assert is_inside("bucket/t", "bucket/t/p/f")
    assert not is_inside("bucket/t", "bucket/t/../u/f")


def _scoped(tmp_path) -> tuple[Storage, str]:  # type: ignore[no-untyped-def]
    storage, root = Storage.for_uri(str(tmp_path / "a" / "b" / "t"))
    return storage.scoped(root), root


def test_scoped_storage_refuses_every_write_outside_the_root(tmp_path) -> None:  # type: ignore[no-untyped-def]
    storage, root = _scoped(tmp_path)
    outside = f"{root}/../../escape/f"
    attempts = [
        lambda: storage.mkdirs(f"{root}/../x"),
        lambda: storage.write_bytes(outside, b"x"),
        lambda: storage.create_new(outside, b"x"),
        lambda: storage.open_output("/somewhere/f"),
        lambda: storage.delete(str(tmp_path / "keep")),
        lambda: storage.delete_dir(str(tmp_path)),
        lambda: storage.rename(f"{root}/f", f"{root}/../f"),
    ]
    (tmp_path / "keep").write_bytes(b"k")
    for attempt in attempts:
        with pytest.raises(UnsafePathError, match="outside the table root") as err:
            attempt()
        assert isinstance(err.value, HudiError)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["keep"]  # nothing created or deleted


def test_scoped_storage_writes_inside_the_root(tmp_path) -> None:  # type: ignore[no-untyped-def]
    storage, root = _scoped(tmp_path)
    storage.create_new(f"{root}/p/./q/f", b"x")
    storage.write_bytes(f"{root}/p/x/../g", b"y")
    assert (tmp_path / "a/b/t/p/q/f").read_bytes() == b"x"
    assert (tmp_path / "a/b/t/p/g").read_bytes() == b"y"
    assert storage.delete(f"{root}/p/g")


def test_table_context_storage_is_scoped_to_the_table(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ctx = TableContext.create(
        str(tmp_path / "t"),
        {
            "hoodie.table.name": "t",
            "hoodie.table.type": "COPY_ON_WRITE",
            "hoodie.table.version": "6",
        },
    )
    assert ctx.storage.root == ctx.base_path
    assert TableContext.open(str(tmp_path / "t")).storage.root == ctx.base_path
    with pytest.raises(UnsafePathError):
        ctx.ensure_partition_metadata("../../escape", "20240101000000000")
    assert not (tmp_path / "escape").exists()


def test_markers_stay_under_the_instants_temp_folder(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pyarrow as pa

    from pyhudi.file_group.spec import WriteTaskSpec
    from pyhudi.model.enums import IOType
    from pyhudi.writer.config import resolve_write_config

    storage, root = _scoped(tmp_path)
    cfg = resolve_write_config({"hoodie.table.name": "t"}, None)
    spec = WriteTaskSpec(storage, root, "20240101000000000", pa.schema([]), cfg.sizing, cfg.bloom)
    spec.create_marker("2024/01/31", "f.parquet", IOType.CREATE)
    assert (tmp_path / "a/b/t/.hoodie/.temp/20240101000000000/2024/01/31").is_dir()
    with pytest.raises(UnsafePathError, match="marker"):
        spec.create_marker("../../x", "f.parquet", IOType.CREATE)  # inside the table, not .temp
    assert not (tmp_path / "a/b/t/.hoodie/x").exists()
