"""The active timeline and instant times (layer 3)."""

from pyhudi.timeline.active import META_FOLDER, ActiveTimeline
from pyhudi.timeline.instant_time import new_instant_time, normalize_instant_time, parse_instant
from pyhudi.timeline.timeline import COMMIT_ACTIONS, Timeline

__all__ = [
    "COMMIT_ACTIONS",
    "META_FOLDER",
    "ActiveTimeline",
    "Timeline",
    "new_instant_time",
    "normalize_instant_time",
    "parse_instant",
]
