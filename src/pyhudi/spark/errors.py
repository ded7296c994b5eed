"""Short errors from the `hudi` data source.

Spark runs the data source in Python workers and puts the worker's formatted traceback into the
message of the error the user gets (`AnalysisException: [PYTHON_DATA_SOURCE_ERROR] ...` when
planning, a failed task when reading or writing); it cannot raise our classes in the user's
process. What we can do is keep that message short: a `HudiError` leaves the data source
re-raised from here with no traceback of pyhudi's internals and no chained cause, so Spark's
(default) simplified traceback shows this one frame and `pyhudi.exceptions.<Class>: <message>`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pyhudi.exceptions import HudiError

F = TypeVar("F", bound=Callable[..., Any])


def short_errors(method: F) -> F:
    """`method` raising any `HudiError` as one line: `pyhudi.exceptions.<Class>: <message>`."""

    @functools.wraps(method)
    def hudi_source(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except HudiError as err:
            raise err.with_traceback(None) from None

    return hudi_source  # type: ignore[return-value]


def short_errors_iter(method: F) -> F:
    """`short_errors` for a method that returns an iterator (a task's `read`)."""

    @functools.wraps(method)
    def hudi_source(*args: Any, **kwargs: Any) -> Iterator[Any]:
        try:
            yield from method(*args, **kwargs)
        except HudiError as err:
            raise err.with_traceback(None) from None

    return hudi_source  # type: ignore[return-value]
