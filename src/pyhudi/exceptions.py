"""The pyhudi error tree: one root, a few subclasses; builtins where Python has the right one."""

from __future__ import annotations

import re
import sys

#: The last line of a Python worker's traceback when a task raised one of these errors, as Spark
#: quotes it in the exception it raises on the driver.
_RAISED_IN_TASK = re.compile(r"^pyhudi\.exceptions\.(\w+): (.*)$", re.MULTILINE)


class HudiError(Exception):
    """Root of every error pyhudi raises on purpose."""


class ConfigError(HudiError, ValueError):
    """An option is unknown where it must be known, missing, or has a value that cannot be used."""


class TableNotFoundError(HudiError, FileNotFoundError):
    """The path holds no Hudi table (no `.hoodie/hoodie.properties`)."""


class TableExistsError(HudiError):
    """A table was to be created where one already exists."""


class UnsupportedVersionError(HudiError):
    """The table version (or log/plan version) is one pyhudi cannot read or write."""


class MissingDependencyError(HudiError, ImportError):
    """An optional package a table needs is not installed (the message names the pip extra)."""


class CorruptFileError(HudiError):
    """A file of the table cannot be decoded (timeline file, log block, properties, ...)."""


class CommitConflictError(HudiError):
    """The timeline changed underneath a write, or an instant file already exists."""


class WriteConflictError(CommitConflictError):
    """Another writer or service got in the way: a concurrent commit touched the same file groups
    (OCC), our instant was rolled back or removed, or a live writer holds the table (single writer).
    Nothing of this write is visible; retry it."""


class LockError(HudiError):
    """The table lock could not be acquired (or was lost) within the configured retries."""


class SchemaMismatchError(HudiError):
    """Incoming data does not fit the table schema (missing fields, narrowing, dropped key fields)."""


class InvalidRecordError(HudiError):
    """A record cannot be written: null record key, bad partition value, ..."""


class UnsupportedOperationError(HudiError):
    """The operation is valid Hudi but not possible on this table or through this entry point."""


class PendingServiceError(HudiError):
    """A pending table service (compaction, clustering) blocks the requested write."""


class WriteError(HudiError):
    """A write failed while running; the table was rolled back to its state before the write."""


class UnsafePathError(HudiError, ValueError):
    """A path a table operation would create or delete resolves outside the table's root folder."""


class InstantNotFoundError(HudiError, KeyError):
    """No such (completed) instant on the table's timeline."""

    def __str__(self) -> str:  # the message as given (KeyError would quote it)
        return str(self.args[0]) if self.args else ""


class UnsupportedInputError(HudiError, TypeError):
    """An entry point was handed data of a type it cannot take (the message names what it takes)."""


def raised_in_task(spark_error: BaseException) -> HudiError | None:
    """The `HudiError` a Spark task raised, rebuilt from the text of the exception Spark raised
    for it on the driver (a Python worker's error reaches the driver only as text); None when no
    task raised one."""
    found = _RAISED_IN_TASK.findall(str(spark_error))
    if not found:
        return None
    name, message = found[-1]
    error_class = getattr(sys.modules[__name__], name, None)
    if not (isinstance(error_class, type) and issubclass(error_class, HudiError)):
        return None
    return error_class(re.sub(r"\s*SQLSTATE: \w+$", "", message).strip())
