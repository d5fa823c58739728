"""The `museum` maintenance commands as an operator runs them: a real process, in a
directory of its own, with a config file there."""

import os
import subprocess
import sys
from dataclasses import dataclass

from serving import ROOT


@dataclass
class Done:
    status: int
    out: str
    err: str


def museum_command(directory, config_text, *args, cwd=None):
    """Run `museum ARGS --config museum.ini` with `config_text` as its config in
    `directory`, working in `cwd` (default: that directory too), without MUSEUM_* variables
    from the test's environment; return what it did."""
    config = directory / "museum.ini"
    config.write_text(config_text, encoding="utf-8")
    config.chmod(0o600)  # as installed (docs/production.md): no warning of a readable file
    environ = {name: value for name, value in os.environ.items()
               if not name.startswith("MUSEUM_")}
    done = subprocess.run([sys.executable, "-m", "museum_cli", *args, "--config", str(config)],
                          cwd=cwd or directory, capture_output=True, text=True, timeout=120,
                          env={**environ, "PYTHONPATH": str(ROOT)})
    return Done(done.returncode, done.stdout.strip(), done.stderr.strip())


def verify_command(directory, text, db_path, config_text="[museum]\ntimezone = UTC\n"):
    """`museum verify-ticket TEXT --db DB_PATH`, as the door runs it: (exit status, stdout,
    stderr)."""
    done = museum_command(directory, config_text, "verify-ticket", text, "--db", str(db_path))
    return done.status, done.out, done.err
