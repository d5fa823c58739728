"""The access log's cost per line, today's writer against the one of an earlier revision,
side by side in one run: 8 threads write 50,000 lines each to a file, as 8 request threads
would, and the CPU time of the whole process (the writing threads, and the thread that
writes the blocks) is divided by the lines. Three rounds, alternating; the medians.

    python benchmarks/access_log.py [REVISION]     # default: d4a191a, before stdlib logging

Only the log's own cost: a request's other work is measured by run.py.
"""

import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THREADS, LINES = 8, 50_000
MESSAGE = "203.0.113.7 GET /v1.1/special-events/3f1c9a52-7d4e-4b8a-9c61-2e5f0d8b7a14 200 3.1ms"


def writer_module(revision):
    """museum_access_log as it is, or as it was at `revision` (None: as it is)."""
    if revision is None:
        sys.path.insert(0, str(ROOT))
        import museum_access_log

        return museum_access_log
    source = subprocess.run(["git", "show", f"{revision}:museum_access_log.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "old_access_log.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_access_log", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def microseconds_per_line(module, file_kind):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "access.log")
        writer = module.AccessLogWriter(path if file_kind == "path" else open(path, "a"), 1.0)

        def write():
            for number in range(LINES):
                writer.write(MESSAGE)

        threads = [threading.Thread(target=write) for _ in range(THREADS)]
        started = time.process_time()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        writer.close()
        used = time.process_time() - started
        with open(path) as log:
            assert sum(1 for _ in log) == THREADS * LINES
    return used / (THREADS * LINES) * 1e6


def main():
    revision = sys.argv[1] if len(sys.argv) > 1 else "d4a191a"
    old, new = writer_module(revision), writer_module(None)
    rounds = {"before": [], "now": []}
    for _ in range(3):
        rounds["before"].append(microseconds_per_line(old, "file"))
        rounds["now"].append(microseconds_per_line(new, "path"))
    for name, figures in rounds.items():
        print(f"{name:6}: {statistics.median(figures):.2f} µs CPU per line "
              f"(rounds: {', '.join(f'{figure:.2f}' for figure in figures)})")


if __name__ == "__main__":
    main()
