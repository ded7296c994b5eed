"""What a test expects of the installed pyspark: `format("hudi")` is Spark's Python data source on
pyspark 4 and `pyhudi.register`'s routing to pyhudi's own calls on 3.5 (docs/compatibility.md)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import pyhudi.exceptions
from pyhudi.spark_compat import has_python_data_sources

#: Spark's Python Data Source API is there (pyspark 4.0+).
DATA_SOURCE = has_python_data_sources()


@contextmanager
def raises_from_format_hudi(
    spark_error: type[Exception], name: str, pattern: str
) -> Iterator[None]:
    """A `format("hudi")` call fails with pyhudi's `name` error, its message matching `pattern`:
    on pyspark 4 inside Spark's `spark_error` (the data source's), on 3.5 raised by the routed
    pyhudi call itself."""
    if DATA_SOURCE:
        with pytest.raises(spark_error, match=rf"{name}: .*{pattern}"):
            yield
    else:
        with pytest.raises(getattr(pyhudi.exceptions, name), match=pattern):
            yield


#: A test of catalog tables of the `hudi` format (`CREATE TABLE ... USING hudi`): Spark resolves
#: them through the data source, which pyspark 3.5 has not; there pyhudi refuses them
#: (`tests/spark/test_sql_ddl.py` checks the refusal).
needs_catalog_tables = pytest.mark.skipif(
    not DATA_SOURCE, reason="a catalog table USING hudi needs pyspark>=4.0 (docs/compatibility.md)"
)
