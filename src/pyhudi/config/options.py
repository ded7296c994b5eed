"""Typed options: one `ConfigOption` per Hudi key, declared once, with default, doc and aliases.

Options are read from a plain `Mapping[str, str]` (what users pass, what `hoodie.properties`
holds). A value that cannot be parsed is a `ConfigError` naming the key.

>>> from pyhudi.config.write import OPERATION
>>> OPERATION.get({"hoodie.datasource.write.operation": "bulk_insert"})
'bulk_insert'
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pyhudi.exceptions import ConfigError

T = TypeVar("T")

#: Every declared option, by key (and alias).
REGISTRY: dict[str, ConfigOption[Any]] = {}


@dataclass(frozen=True)
class ConfigOption(Generic[T]):
    key: str
    default: T | None
    doc: str
    parser: Callable[[str], T]
    kind: str
    aliases: tuple[str, ...] = ()
    choices: tuple[str, ...] | None = None
    group: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for name in (self.key, *self.aliases):
            REGISTRY.setdefault(name, self)

    def raw(self, options: Mapping[str, str]) -> str | None:
        """The value as given under the key or one of its aliases, or None."""
        for name in (self.key, *self.aliases):
            value = options.get(name)
            if value is not None:
                return str(value)
        return None

    def is_set(self, options: Mapping[str, str]) -> bool:
        return self.raw(options) is not None

    def get(self, options: Mapping[str, str]) -> T:
        """The parsed value, or the default. Raises `ConfigError` for a bad value."""
        value = self.raw(options)
        if value is None:
            return self.default  # type: ignore[return-value]
        try:
            return self.parser(value)
        except (ValueError, KeyError) as err:
            raise ConfigError(f"invalid value {value!r} for {self.key}: {err}") from err


def _parse_bool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise ValueError("expected true or false")


def _parse_int(value: str) -> int:
    return int(value.strip())


def _parse_float(value: str) -> float:
    return float(value.strip())


def _parse_list(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def string(key: str, default: str | None, doc: str, *aliases: str) -> ConfigOption[str]:
    return ConfigOption(key, default, doc, lambda v: v, "string", aliases)


def boolean(key: str, default: bool, doc: str, *aliases: str) -> ConfigOption[bool]:
    return ConfigOption(key, default, doc, _parse_bool, "boolean", aliases)


def integer(key: str, default: int | None, doc: str, *aliases: str) -> ConfigOption[int]:
    return ConfigOption(key, default, doc, _parse_int, "integer", aliases)


def number(key: str, default: float, doc: str, *aliases: str) -> ConfigOption[float]:
    return ConfigOption(key, default, doc, _parse_float, "number", aliases)


def string_list(
    key: str, default: tuple[str, ...] | None, doc: str, *aliases: str
) -> ConfigOption[tuple[str, ...]]:
    return ConfigOption(key, default, doc, _parse_list, "list", aliases)


def choice(
    key: str,
    default: str | None,
    choices: tuple[str, ...],
    doc: str,
    *aliases: str,
    upper: bool = True,
) -> ConfigOption[str]:
    """A closed set of values, matched case-insensitively; the canonical spelling is returned."""
    canonical = {c.lower(): c for c in choices}

    def parse(value: str) -> str:
        found = canonical.get(value.strip().lower())
        if found is None:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return found

    return ConfigOption(key, default, doc, parse, "choice", aliases, choices)


def all_options() -> Iterator[ConfigOption[Any]]:
    """Every declared option once, sorted by key (`pyhudi config list`)."""
    seen: dict[str, ConfigOption[Any]] = {}
    for option in REGISTRY.values():
        seen[option.key] = option
    for key in sorted(seen):
        yield seen[key]
