"""pyhudi on Spark: the session helper, the `hudi` data source, streaming, catalog tables.

Submodules load on first attribute access (`pyhudi.spark.datasource.register(spark)` works right
after `import pyhudi`), so importing pyhudi does not import pyspark.
"""

from __future__ import annotations

import importlib
from types import ModuleType

_SUBMODULES = (
    "catalog",
    "datasource",
    "deploy",
    "session",
    "source",
    "source_writer",
    "streaming",
    "sync",
)


def __getattr__(name: str) -> ModuleType:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
