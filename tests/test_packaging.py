"""What `pip install .` installs is every module the service is made of: a module missing
from pyproject.toml works in the editable install the tests use, and fails for a museum."""

import tomllib

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
