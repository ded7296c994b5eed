"""S3 settings from a SparkSession's S3A configuration, so pyhudi's own reads and writes reach the
bucket the way the user's Spark does.

pyarrow and obstore take S3 settings from the environment (`AWS_ENDPOINT_URL`,
`AWS_ACCESS_KEY_ID`, ...). Spark users configure S3A instead (`spark.hadoop.fs.s3a.*` or the
Hadoop configuration itself), as Hudi's JVM writers read it. When pyhudi is handed a classic or
Spark Connect session (`pyhudi.write`, `read`, `stream_write`, `register`), it reads these keys
once and uses them for every `s3://`, `s3a://` or `s3n://` table it opens in this process:

| S3A key (`fs.s3a.`)             | used as                                                      |
|---------------------------------|--------------------------------------------------------------|
| `endpoint`                      | the endpoint; without a scheme, `connection.ssl.enabled`     |
|                                 | (default true) picks https or http                           |
| `endpoint.region`               | the signing region (default: `AWS_REGION`, else us-east-1)   |
| `path.style.access`             | path-style addressing when true                              |
| `access.key`, `secret.key`,     | the credentials; when absent, the SDKs' default chain        |
| `session.token`                 | (environment, profile, instance role)                         |

`fs.s3a.bucket.<bucket>.<key>` overrides a key for one bucket, as in Hadoop. A key S3A does not
have is left to the environment. Without any of these keys, nothing changes: the environment
alone configures S3. The settings travel with `Storage` (pickled to executors) and are never
printed: credentials are kept out of `repr` and every message.

Spark's Python data source (`format("hudi")`) runs in Python workers, which see the environment
of Spark's executors, not this registry: set the `AWS_*` variables there (`spark.executorEnv.*`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PREFIX = "fs.s3a."
#: The S3A keys pyhudi honours, without the prefix.
KEYS = (
    "endpoint",
    "endpoint.region",
    "path.style.access",
    "connection.ssl.enabled",
    "access.key",
    "secret.key",
    "session.token",
)


@dataclass(frozen=True)
class S3Settings:
    """One bucket's S3 settings, from S3A's keys (None: the environment decides)."""

    endpoint: str | None = None
    region: str | None = None
    path_style: bool | None = None
    access_key: str | None = field(default=None, repr=False)
    secret_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)

    @property
    def signing_region(self) -> str:
        env = os.environ
        return self.region or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"

    def pyarrow_options(self) -> dict[str, Any]:
        """`pyarrow.fs.S3FileSystem`'s arguments."""
        options: dict[str, Any] = {"region": self.signing_region}
        endpoint = self.endpoint or env_endpoint()
        if endpoint:
            scheme, _, host = endpoint.partition("://")
            options["endpoint_override"] = host.rstrip("/")
            options["scheme"] = scheme.lower()
        if self.path_style is not None:
            options["force_virtual_addressing"] = not self.path_style
        if self.access_key is not None:
            options.update(access_key=self.access_key, secret_key=self.secret_key)
            if self.session_token:
                options["session_token"] = self.session_token
        return options

    def obstore_options(self) -> dict[str, Any]:
        """obstore's `S3Store` arguments these settings decide (the rest: the environment, and
        the region of the pyarrow file system built from `pyarrow_options`, which the caller
        passes)."""
        options: dict[str, Any] = {}
        if self.endpoint:
            options["endpoint"] = self.endpoint
            if self.endpoint.lower().startswith("http://"):
                options["client_options"] = {"allow_http": True}
        if self.path_style is not None:
            options["virtual_hosted_style_request"] = not self.path_style
        if self.access_key is not None:
            options.update(access_key_id=self.access_key, secret_access_key=self.secret_key)
            if self.session_token:
                options["token"] = self.session_token
        return options


def env_endpoint() -> str | None:
    """The S3 endpoint the environment names (`AWS_ENDPOINT_URL_S3` over `AWS_ENDPOINT_URL`)."""
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")


def _truth(value: str | None) -> bool | None:
    return None if value is None else value.strip().lower() == "true"


def settings_from(conf: Mapping[str, str], bucket: str) -> S3Settings | None:
    """The settings of `bucket` in S3A keys (`fs.s3a.<key>`, per-bucket overrides first); None
    when no S3A key is set."""

    def get(key: str) -> str | None:
        value = conf.get(f"{PREFIX}bucket.{bucket}.{key}")
        if value is None:
            value = conf.get(PREFIX + key)
        return value.strip() if value is not None and value.strip() else None

    values = {key: get(key) for key in KEYS}
    if all(value is None for value in values.values()):
        return None
    endpoint = values["endpoint"]
    if endpoint and "://" not in endpoint:
        ssl = _truth(values["connection.ssl.enabled"])
        endpoint = f"{'http' if ssl is False else 'https'}://{endpoint}"
    return S3Settings(
        endpoint=endpoint,
        region=values["endpoint.region"],
        path_style=_truth(values["path.style.access"]),
        access_key=values["access.key"],
        secret_key=values["secret.key"],
        session_token=values["session.token"],
    )


class _Registry:
    """The S3A keys of the last session pyhudi was handed in this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conf: dict[str, str] = {}

    def set(self, conf: Mapping[str, str]) -> None:
        with self._lock:
            self._conf = {k: v for k, v in conf.items() if k.startswith(PREFIX)}

    def settings(self, bucket: str) -> S3Settings | None:
        with self._lock:
            conf = self._conf
        return settings_from(conf, bucket) if conf else None


_REGISTRY = _Registry()


def settings_for(bucket: str) -> S3Settings | None:
    """The S3A settings of `bucket` pyhudi was handed, or None (the environment decides)."""
    return _REGISTRY.settings(bucket)


def use_conf(conf: Mapping[str, str]) -> None:
    """Use these S3A keys (`fs.s3a.*`, as a session's Hadoop configuration has them) for the
    tables this process opens next (`pyhudi.spark_env.s3a_conf` reads a session's)."""
    _REGISTRY.set(conf)


def forget_conf() -> None:
    """Back to the environment alone."""
    _REGISTRY.set({})
