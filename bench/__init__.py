"""pyhudi benchmarks: ratios against plain Spark on the same data in the same session."""
