"""Hostile values for the issue-14 tests: Hypothesis strategies and what a value renders to."""

from __future__ import annotations

from hypothesis import strategies as st

from pyhudi.keygen.spark import escape_path_value

SPECIALS = [
    "..",
    ".",
    "/",
    "../../escape",
    "/somewhere",
    "a/b",
    "a//b",
    "x/",
    "a\nb",
    "\x00",
    "2024/01/31",
    "__HIVE_DEFAULT_PARTITION__",
    "%2E%2E",
    "東京",
    "\\..\\",
]
#: Any unicode text but lone surrogates (Spark and Arrow strings are valid UTF-8).
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
long_text = st.text(st.sampled_from("aé/.\n東"), min_size=200, max_size=300)
values = st.one_of(
    st.sampled_from(SPECIALS), text, long_text, st.lists(st.sampled_from(SPECIALS)).map("/".join)
)
column_names = st.one_of(
    st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,12}\Z"),
    st.sampled_from(["fare amount", "1st", "a.b", "größe", "x-y", "", "a\nb"]),
    text,
)


def rendered(value: str, urlencode: bool, hive: bool) -> str:
    """The partition path part a simple key generator makes of `value` (field `p`)."""
    out = escape_path_value(value) if urlencode else value
    out = out or "__HIVE_DEFAULT_PARTITION__"
    return f"p={out}" if hive else out
