"""Spark's Python Data Source API: `df.write.format("hudi")` and `spark.read.format("hudi")`.

`register(spark)` is the one call a user's own SparkSession (local, cluster or Spark Connect)
needs: it registers the `hudi` format and sets the runtime SQL conf the reader's partition
pruning needs (`spark.sql.python.filterPushdown.enabled`). Without it the format is still found
by Spark through the `pyspark_hudi` module (no pruning), wherever pyhudi is installed.
"""

from __future__ import annotations

import weakref

from pyspark.sql import SparkSession

from pyhudi.spark_env import is_connect, s3a_conf
from pyhudi.storage.s3conf import use_conf

#: The runtime SQL conf Spark checks before it lets a Python data source push filters down.
FILTER_PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
_registered: weakref.WeakSet[SparkSession] = weakref.WeakSet()
#: Spark Connect hands out a new client object per `df.sparkSession`: remember the server session.
_registered_remote: set[str] = set()


def register(spark: SparkSession) -> None:
    """Register the `hudi` format with this SparkSession (idempotent)."""
    remote = str(getattr(spark, "session_id", "")) if is_connect(spark) else ""
    if spark in _registered or remote in _registered_remote:
        return
    use_conf(s3a_conf(spark))  # its S3A settings, for the S3 tables pyhudi opens from here on
    from pyhudi.spark.source import PruningHudiDataSource

    spark.conf.set(FILTER_PUSHDOWN_CONF, "true")
    spark.dataSource.register(PruningHudiDataSource)
    _registered.add(spark)
    if remote:
        _registered_remote.add(remote)
