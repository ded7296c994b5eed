"""docs/options.md is generated from the option registry and must match it (no Spark)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType

from pyhudi.config import all_options

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    path = ROOT / "scripts" / "gen-options-doc"
    loader = importlib.machinery.SourceFileLoader("gen_options_doc", str(path))
    spec = importlib.util.spec_from_loader("gen_options_doc", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_options_page_equals_what_the_generator_writes_from_the_registry():
    generator = _generator()
    expected = generator.render()
    assert (ROOT / "docs" / "options.md").read_text() == expected, (
        f"docs/options.md is stale: run {generator.REGENERATE} and commit the result"
    )


def test_options_page_lists_every_registered_key_once():
    generator = _generator()
    page = generator.render()
    keys = {option.key for options in generator.grouped_options().values() for option in options}
    assert {option.key for option in all_options()} <= keys
    for key in keys:
        assert page.count(f"| `{key}`") == 1, key
