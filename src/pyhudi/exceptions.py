"""The pyhudi error tree: one root, a few subclasses; builtins where Python has the right one."""

from __future__ import annotations

import re
import sys

#: The last line of a Python worker's traceback when a task raised one of these errors, as Spark
#: quotes it in the exception it raises on the driver.
_RAISED_IN_TASK = re.compile(r"^pyhudi\.exceptions\.(\w+): (.*)$", re.MULTILINE)
#: Spark's error class code, which it appends to the last line of a task's error.
_SQL_STATE = re.compile(r"\s*SQLSTATE: \w+$")


class HudiError(Exception):
    """Root of every error pyhudi raises on purpose."""


class ConfigError(HudiError, ValueError):
    """An option is unknown where it must be known, missing, or has a value that cannot be used."""


class TableNotFoundError(HudiError, FileNotFoundError):
    """The path holds no Hudi table (no `.hoodie/hoodie.properties`)."""


class TableExistsError(HudiError):
    """A table was to be created where one already exists."""


class NotAHudiTableError(HudiError, FileExistsError):
    """A write would create a table in a folder that holds something else (files, folders)."""


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
    """A write failed while running; the table reads as before the write (what it wrote is rolled
    back at once or, when storage could not be reached, by the next write)."""


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
    return error_class(_SQL_STATE.sub("", message).strip())


_NO_FILESYSTEM = re.compile(r'No FileSystem for scheme "?(\w+)"?')
#: pyspark's first line of a Python task's error (`PythonException`); the error the task raised is
#: the last unindented `Name: message` line of the traceback that follows.
_PYTHON_WORKER = "An exception was thrown from the Python worker"
_RAISED = re.compile(r"^[A-Za-z_][\w.]*: \S.*$", re.MULTILINE)
_S3_SCHEMES = ("s3", "s3a", "s3n")


def jvm_error_summary(text: str) -> str:
    """One line for an error Spark's JVM raised: py4j's first line names only the method called
    (`An error occurred while calling o1051.parquet.`), so the Java exception and its root cause
    are added, with a hint when Spark has no file system for a URI's scheme; pyspark's first line
    of a Python task's error names nothing either, so the error the task raised is added."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    summary = lines[0]
    raised = _RAISED.findall(text) if summary.startswith(_PYTHON_WORKER) else []
    if raised:
        summary = f"{_PYTHON_WORKER}: {_SQL_STATE.sub('', raised[-1]).strip()}"
    if summary.startswith("An error occurred while calling"):
        thrown = next((line[2:] for line in lines[1:] if line.startswith(": ")), None)
        causes = [
            line.removeprefix("Caused by: ") for line in lines if line.startswith("Caused by:")
        ]
        summary = (
            "; caused by ".join(
                part for part in dict.fromkeys([thrown, causes[-1] if causes else None]) if part
            )
            or summary
        )
    missing = _NO_FILESYSTEM.search(text)
    if missing:
        scheme = missing.group(1)
        hint = f"Spark has no file system for {scheme}:// URIs"
        if scheme in _S3_SCHEMES:
            hint += (
                " (add hadoop-aws at your Hadoop version, e.g. spark.jars.packages="
                "org.apache.hadoop:hadoop-aws:<version>, and map the scheme with "
                f"spark.hadoop.fs.{scheme}.impl=org.apache.hadoop.fs.s3a.S3AFileSystem)"
            )
        summary = f"{hint}: {summary}"
    return summary
