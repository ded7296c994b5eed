"""pyhudi: Apache Hudi tables (table version 6) written and read on PySpark, with no Hudi jars.

import pyhudi
result = pyhudi.write(df, "/data/trips", {...Hudi write options...})
df = pyhudi.read(spark, "/data/trips", {"as.of.instant": result.instant_time})
"""

import importlib
from types import ModuleType

from pyhudi.api import (
    HudiTable,
    downgrade_table,
    read,
    read_arrow,
    register,
    sql,
    stream_write,
    upgrade_table,
    write,
)
from pyhudi.exceptions import (
    CommitConflictError,
    ConfigError,
    CorruptFileError,
    HudiError,
    InstantNotFoundError,
    InvalidRecordError,
    LockError,
    MissingDependencyError,
    NotAHudiTableError,
    PendingServiceError,
    SchemaMismatchError,
    TableExistsError,
    TableNotFoundError,
    UnsupportedInputError,
    UnsupportedOperationError,
    UnsupportedVersionError,
    WriteConflictError,
    WriteError,
)
from pyhudi.model.results import (
    ArchiveResult,
    BootstrapResult,
    CleanResult,
    CommitResult,
    ServiceOutcome,
)

__version__ = "0.1.0"


def __getattr__(name: str) -> ModuleType:
    """`pyhudi.spark` loads on first use, so `import pyhudi` does not import pyspark."""
    if name == "spark":
        return importlib.import_module("pyhudi.spark")
    raise AttributeError(f"module 'pyhudi' has no attribute {name!r}")


__all__ = [
    "ArchiveResult",
    "BootstrapResult",
    "CleanResult",
    "CommitConflictError",
    "CommitResult",
    "ConfigError",
    "CorruptFileError",
    "HudiError",
    "HudiTable",
    "InstantNotFoundError",
    "InvalidRecordError",
    "LockError",
    "MissingDependencyError",
    "NotAHudiTableError",
    "PendingServiceError",
    "SchemaMismatchError",
    "ServiceOutcome",
    "TableExistsError",
    "TableNotFoundError",
    "UnsupportedInputError",
    "UnsupportedOperationError",
    "UnsupportedVersionError",
    "WriteConflictError",
    "WriteError",
    "__version__",
    "downgrade_table",
    "read",
    "read_arrow",
    "register",
    "sql",
    "stream_write",
    "upgrade_table",
    "write",
]
