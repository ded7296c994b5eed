"""Table locks: Hudi's lock providers by class name, and the transaction lock around commits."""

from pyhudi.table.lock.config import LockConfig
from pyhudi.table.lock.manager import (
    holds_table_lock,
    is_multi_writer,
    lock_provider,
    table_transaction,
    write_scope_lock,
)

__all__ = [
    "LockConfig",
    "holds_table_lock",
    "is_multi_writer",
    "lock_provider",
    "table_transaction",
    "write_scope_lock",
]
