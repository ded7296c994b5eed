"""Moved to `pyhudi.merge.ordering`; kept only for tests/judge/test_null_ordering_values.py,
which imports these two names from here. Delete once that test imports `pyhudi.merge.ordering`."""

from pyhudi.merge.ordering import ARROW, earlier_stays

__all__ = ["ARROW", "earlier_stays"]
