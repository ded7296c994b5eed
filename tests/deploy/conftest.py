"""Deployments started by the tests themselves: a fresh user process, a Spark Connect server,
a standalone cluster. Everything started here is stopped in `finally`."""
