"""How much `import roofline` costs compared with `import numpy` (target: at most 1.5x).

Each import runs in a fresh Python process; prints the median of several runs.
"""

import statistics
import subprocess
import sys

RUNS = 7


def time_import(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def main() -> dict:
    numpy_s = [time_import("numpy") for _ in range(RUNS)]
    roofline_s = [time_import("roofline") for _ in range(RUNS)]
    heavy = subprocess.run(
        [
            sys.executable,
            "-c",
            "import roofline, sys; print(sorted(m for m in "
            "('sympy','matplotlib','ipywidgets','scipy') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    result = {
        "numpy_median_s": statistics.median(numpy_s),
        "roofline_median_s": statistics.median(roofline_s),
    }
    result["ratio"] = result["roofline_median_s"] / result["numpy_median_s"]
    print(
        f"import numpy:    median {result['numpy_median_s'] * 1e3:.1f} ms "
        f"(min {min(numpy_s) * 1e3:.1f}, max {max(numpy_s) * 1e3:.1f}) over {RUNS} runs"
    )
    print(
        f"import roofline: median {result['roofline_median_s'] * 1e3:.1f} ms "
        f"(min {min(roofline_s) * 1e3:.1f}, max {max(roofline_s) * 1e3:.1f}); "
        f"ratio {result['ratio']:.2f} (target <= 1.5); heavy modules loaded: {heavy}"
    )
    return result


if __name__ == "__main__":
    main()
