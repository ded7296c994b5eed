"""`pyhudi` itself: bare, it prints the help and succeeds; `--version` prints the version."""

from __future__ import annotations

import importlib.metadata

import pytest

import pyhudi
from pyhudi.cli.main import main, package_version


def test_bare_pyhudi_prints_the_help_and_exits_0(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: pyhudi") and "compaction" in out and "--version" in out


def test_version_prints_the_installed_version_and_exits_0(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"pyhudi {importlib.metadata.version('pyhudi')}"


def test_version_falls_back_to_the_package_version_when_not_installed(monkeypatch):
    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert package_version() == pyhudi.__version__
