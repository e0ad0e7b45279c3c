"""Run every benchmark script in this folder and print its figures (`make bench`)."""

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SKIP = {"run_all.py", "gpu_check.py"}

for script in sorted(HERE.glob("bench_*.py")):
    if script.name in SKIP:
        continue
    print(f"\n=== {script.name} ===", flush=True)
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as stop:
        if stop.code not in (0, None):
            print(f"{script.name} exited with {stop.code}", file=sys.stderr)
