"""Instant-time generation: `yyyyMMddHHmmssSSS`, strictly increasing within the process (§2.1)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone

from pyhudi.model.instant import InstantTime

_FORMAT = "%Y%m%d%H%M%S"
_lock = threading.Lock()
_last_generated: str = ""


def format_instant(moment: datetime) -> InstantTime:
    return InstantTime(moment.strftime(_FORMAT) + f"{moment.microsecond // 1000:03d}")


def parse_instant(time: str, *, utc: bool = True) -> datetime:
    """The moment an instant time names (14-digit times get `999` ms, as Hudi parses them)."""
    digits = time[:17] if len(time) >= 17 else time + "999"
    moment = datetime.strptime(digits[:14], _FORMAT).replace(microsecond=int(digits[14:17]) * 1000)
    return moment.replace(tzinfo=timezone.utc) if utc else moment.astimezone()


def new_instant_time(existing: Iterable[str] = (), *, utc: bool = True) -> InstantTime:
    """A fresh instant time, later than every instant in `existing` and every one made before."""
    global _last_generated
    with _lock:
        now = datetime.now(timezone.utc) if utc else datetime.now()
        candidate = format_instant(now)
        floor = max([_last_generated, *(t[:17] for t in existing)], default="")
        if candidate <= floor:
            candidate = format_instant(parse_instant(floor) + timedelta(milliseconds=1))
        _last_generated = candidate
        return candidate


def normalize_instant_time(value: str) -> InstantTime:
    """Accept the instant forms Hudi's `as.of.instant` accepts.

    `yyyyMMddHHmmssSSS`, `yyyyMMddHHmmss`, `yyyy-MM-dd HH:mm:ss[.SSS]` and `yyyy-MM-dd` (the start
    of that day, as Hudi's `formatQueryInstant`).
    """
    text = value.strip()
    if InstantTime.is_valid(text):
        return InstantTime(text)
    for pattern in (
        "%Y-%m-%d %H:%M:%S.%f",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%dT%H:%M:%S.%f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d",
    ):
        try:
            moment = datetime.strptime(text, pattern)
        except ValueError:
            continue
        return format_instant(moment)
    raise ValueError(
        f"not an instant time: {value!r} (use yyyyMMddHHmmssSSS or yyyy-MM-dd HH:mm:ss.SSS)"
    )
