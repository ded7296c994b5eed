"""Where a table keeps its working files, in one place: the marker folder of an instant and the
partition metafile (`.hoodie_partition_metadata`, reference §1.9) every partition holds."""

from __future__ import annotations

import contextlib
import posixpath

from pyhudi.codec.file_names import PARTITION_METAFILE_PREFIX, marker_name
from pyhudi.codec.properties import dump_partition_metadata
from pyhudi.model.enums import IOType
from pyhudi.storage import Storage
from pyhudi.storage.guard import check_inside
from pyhudi.timeline import META_FOLDER

#: `.hoodie/.temp/<instant>/<partition>/<data file>.marker.<IOType>`.
TEMP_FOLDER = ".temp"
#: The text-format partition metafile (pyhudi writes `partition.metafile.use.base.format=false`).
PARTITION_METAFILE = PARTITION_METAFILE_PREFIX


def marker_folder(base_path: str, instant_time: str) -> str:
    return posixpath.join(base_path, META_FOLDER, TEMP_FOLDER, instant_time)


def ensure_partition_metadata(
    storage: Storage, partition_dir: str, partition: str, instant_time: str
) -> None:
    """Write the partition metafile into `partition_dir` unless it is there already."""
    target = posixpath.join(partition_dir, PARTITION_METAFILE)
    if storage.exists(target):
        return
    depth = len(partition.split("/")) if partition else 0
    with contextlib.suppress(FileExistsError):  # another task created it first: same content
        storage.create_new(target, dump_partition_metadata(instant_time, depth))


def remove_partition_left_empty(storage: Storage, base_path: str, partition: str) -> bool:
    """Delete a partition folder that holds nothing but its partition metafile, and the parent
    folders it leaves empty (up to the table root). True when something was removed.

    For an aborted write that created the partition: the table is left as it was before.
    """
    if not partition:
        return False
    folder = posixpath.join(base_path, partition)
    children = storage.list_dir(folder)
    if not children or any(c.is_dir or not c.name.startswith(PARTITION_METAFILE) for c in children):
        return False
    for child in children:
        storage.delete(child.path)
    while folder != base_path and folder.startswith(base_path) and not storage.list_dir(folder):
        storage.delete_dir(folder)
        folder = posixpath.dirname(folder)
    return True


def marker_path(
    base_path: str, instant_time: str, partition: str, data_file_name: str, io_type: IOType
) -> str:
    """`.hoodie/.temp/<instant>/<partition>/<data file>.marker.<IOType>`; `UnsafePathError` when
    the partition would take it out of the instant's marker folder."""
    root = marker_folder(base_path, instant_time)
    folder = posixpath.join(root, partition) if partition else root
    path = posixpath.join(folder, marker_name(data_file_name, io_type))
    check_inside(root, path, action="create marker")  # always under .hoodie/.temp/<instant>/
    return path
