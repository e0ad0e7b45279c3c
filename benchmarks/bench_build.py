"""Book build time: a clean full build (every notebook executed) and a no-change rebuild.

Targets on a 2-core machine: clean build under 2 minutes, no-change rebuild under 15 s.
Builds into a temporary folder; prints the median of RUNS runs of each.
"""

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 3


def build(out: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_book.py"), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def main(runs: int = RUNS) -> dict:
    clean, rebuild = [], []
    for _ in range(runs):
        out = Path(tempfile.mkdtemp(prefix="bench-book-"))
        try:
            clean.append(build(out))
            rebuild.append(build(out))
        finally:
            shutil.rmtree(out, ignore_errors=True)
    print(
        f"clean build:      median {statistics.median(clean):.1f} s "
        f"(all: {', '.join(f'{s:.1f}' for s in clean)}; target < 120 s)"
    )
    print(
        f"no-change build:  median {statistics.median(rebuild):.1f} s "
        f"(all: {', '.join(f'{s:.1f}' for s in rebuild)}; target < 15 s)"
    )
    return {"clean_s": statistics.median(clean), "rebuild_s": statistics.median(rebuild)}


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS)
