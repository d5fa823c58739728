"""What `pip install .` installs is every module the service is made of: a module missing
from pyproject.toml works in the editable install the tests use, and fails for a museum."""

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from serving import ROOT


def test_every_module_and_package_of_the_service_is_installed():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    modules = {path.stem for path in ROOT.glob("*.py")}
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests"}
    assert set(setuptools["py-modules"]) == modules
    assert set(setuptools["packages"]) == packages


def test_the_scanner_page_files_are_package_data():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["museum_pages"]
    shipped = {path.name for path in (ROOT / "museum_pages").iterdir()
               if path.suffix in (".html", ".js", ".css")}
    assert shipped and all(any(name.endswith(pattern.lstrip("*")) for pattern in patterns)
                           for name in shipped)


@pytest.mark.slow
def test_the_wheel_installs_only_museum_names_at_the_top_level(tmp_path):
    """An integrator's WSGI host may already have an `access_log` or a `ticket_image`: every
    name the package puts at the top of site-packages is `museum`, `museum_*` or `storage`.
    The wheel is built as `pip install .` builds it."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--wheel-dir", str(tmp_path), str(ROOT)], check=True, timeout=300)
    [wheel] = tmp_path.glob("*.whl")
    names = {Path(name).parts[0] for name in zipfile.ZipFile(wheel).namelist()}
    installed = {name.removesuffix(".py") for name in names if not name.endswith(".dist-info")}
    assert "museum" in installed and "storage" in installed
    assert [name for name in installed
            if not (name == "museum" or name.startswith("museum_") or name == "storage")] == []
