"""pyhudi: Apache Hudi tables (table version 6) on PySpark, with no Hudi jars."""

__version__ = "0.1.0"
