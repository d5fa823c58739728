"""The access log's cost per line, so per request, today's writer against those of earlier
revisions, side by side in one run: 8 threads write 50,000 lines each to a file, as 8
request threads would, and the CPU time of the whole process (the writing threads, and the
thread that writes the blocks) is divided by the lines. Each revision's writer is made by
its own `open_access_log`, as its service made it ([log] access = a file, flush = 1). Three
rounds, alternating; the medians.

    python benchmarks/access_log.py [REVISION ...]  # default: fdddd5d (1.3.0) b3a8902

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


class LogSettings(dict):
    """What `open_access_log` reads of a config: its [log] section and its file's name."""

    source = "benchmark.ini"


def microseconds_per_line(module):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "access.log")
        writer = module.open_access_log(LogSettings(log={"access": path, "flush": 1.0}))

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
    revisions = sys.argv[1:] or ["fdddd5d", "b3a8902"]
    writers = {revision: writer_module(revision) for revision in revisions}
    writers["now"] = writer_module(None)
    rounds = {name: [] for name in writers}
    for _ in range(3):
        for name, module in writers.items():
            rounds[name].append(microseconds_per_line(module))
    for name, figures in rounds.items():
        print(f"{name:8}: {statistics.median(figures):.2f} µs CPU per line "
              f"(rounds: {', '.join(f'{figure:.2f}' for figure in figures)})")


if __name__ == "__main__":
    main()
