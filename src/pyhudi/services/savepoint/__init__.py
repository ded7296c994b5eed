"""Savepoints and restore (Hudi 0.15): savepoint a commit, list and delete savepoints, restore a
table to a savepoint, roll back its latest commit. Plain functions of a table path or context and
Hudi's options, Spark-free."""

from pyhudi.services.savepoint.create import create_savepoint, delete_savepoint, savepoints
from pyhudi.services.savepoint.restore import restore_to_savepoint, rollback_to_instant
from pyhudi.services.savepoint.results import RestoreResult, RollbackResult, SavepointInfo

__all__ = [
    "RestoreResult",
    "RollbackResult",
    "SavepointInfo",
    "create_savepoint",
    "delete_savepoint",
    "restore_to_savepoint",
    "rollback_to_instant",
    "savepoints",
]
