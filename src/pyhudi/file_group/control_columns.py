"""Task functions that write base files (`mapInArrow` / `applyInArrow` bodies). Arrow only.

Rows reach these functions with their record key and partition path already computed (Spark
expressions) and, for writes into existing file groups, with control columns naming the target:

| column            | meaning                                                         |
|-------------------|-----------------------------------------------------------------|
| `__pyhudi_fid`    | target file id                                                  |
| `__pyhudi_base`   | file name of the base file to merge into (null: a new file group) |
| `__pyhudi_delete` | true for a delete (delete operation or `_hoodie_is_deleted`)     |
| `__pyhudi_located` | optional: true when an exact index found the key in the target file group, false when the key is new to it (null/absent: unknown) |
| `__pyhudi_position` | optional: the record's row position in the base file `__pyhudi_base` as the index lookup read it (null: not a row of it; absent: not known) |

`LOCATED` is not one of `CONTROL_COLUMNS` (which every write carries): only writes whose index
knows the merged keys of every file group (`pyhudi.index.locate.locates_exactly`) set it, for the
log-append tasks to return their key changes without reading the slice (`index_results`).
`POSITION` is not one either: the file-based index lookups set it for merge-on-read writes whose
log blocks carry record positions (`RECORD_POSITIONS`), so the append task need not read the base
file's keys to find them.
"""

from __future__ import annotations

FID, BASE, DELETE = "__pyhudi_fid", "__pyhudi_base", "__pyhudi_delete"
CONTROL_COLUMNS = (FID, BASE, DELETE)
LOCATED = "__pyhudi_located"
POSITION = "__pyhudi_position"
