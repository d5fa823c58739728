"""The committed description, docs/openapi.json, is the one the code assembles: it validates,
and it differs the moment a resource's description changes without it being regenerated."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest
from openapi_spec_validator import validate

import museum
from serving import ROOT

FILE = ROOT / "docs" / "openapi.json"
REGENERATE = ".venv/bin/python docs/make_openapi.py"


def make_openapi():
    """docs/make_openapi.py, the generator the lead re-runs (docs/ is not a package)."""
    spec = importlib.util.spec_from_file_location("make_openapi", ROOT / "docs" / "make_openapi.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_description_is_the_one_the_code_assembles():
    assert FILE.read_text(encoding="utf-8") == make_openapi().text(), (
        f"docs/openapi.json differs from the description the resources give; regenerate "
        f"it: {REGENERATE}")


def test_the_committed_description_validates():
    validate(json.loads(FILE.read_text(encoding="utf-8")))  # raises on any error


def test_a_changed_resource_description_fails_the_check_above(monkeypatch):
    """The check can fail: one resource's summary changed, the same file is stale."""
    resource = museum.API_ROUTES["/special-events"]
    described = dict(resource.described)
    described["get"] = described["get"]._replace(summary="List the events, changed")
    monkeypatch.setattr(resource, "described", described)
    museum.openapi_description.cache_clear()
    try:
        assert '"summary": "List the events, changed"' in make_openapi().text()
        with pytest.raises(AssertionError, match="regenerate it"):
            test_the_committed_description_is_the_one_the_code_assembles()
    finally:
        monkeypatch.undo()
        museum.openapi_description.cache_clear()


def test_museum_openapi_prints_the_file_as_committed(tmp_path):
    """`museum openapi > openapi.json` makes the same file, byte for byte."""
    done = subprocess.run([sys.executable, "-m", "museum_cli", "openapi"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == make_openapi().text()


def test_the_api_page_says_how_to_regenerate_the_file():
    assert REGENERATE in (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
