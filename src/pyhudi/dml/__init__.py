"""Row-level changes of a Hudi table: MERGE INTO, UPDATE and DELETE (`HudiTable.merge`,
`.update`, `.delete`), and `pyhudi.sql`, which runs them (and Hudi's CALL procedures) from SQL."""

from pyhudi.dml.merge import MergeBuilder, MergeResult

__all__ = ["MergeBuilder", "MergeResult"]
