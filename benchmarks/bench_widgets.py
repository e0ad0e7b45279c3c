"""Time one control change of each explorer (the same path a reader's slider takes).

    .venv/bin/python benchmarks/bench_widgets.py [--repeats 30]

Prints median, spread (min, 90th percentile, max) in milliseconds per change, the work
done (`Explorer.work`: full draws, blits, figures built), and the time and size of each
explorer's static web fallback. Target: median < 50 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time

import matplotlib

matplotlib.use("Agg")

from roofline import widgets  # noqa: E402

CASES = [
    (
        "roofline_explorer",
        widgets.roofline_explorer,
        "intensity",
        [1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0],
    ),
    (
        "roofline_explorer (chip)",
        widgets.roofline_explorer,
        "chip",
        ["H100 SXM", "TPU v5e", "MI300X"],
    ),
    ("matmul_explorer", widgets.matmul_explorer, "B", [1, 8, 64, 256, 1024, 8192]),
    ("matmul_explorer (weights)", widgets.matmul_explorer, "weights", [None, "int8", "fp8"]),
    ("sharded_matmul_explorer", widgets.sharded_matmul_explorer, "D", [256, 2048, 16384, 131072]),
    ("sharded_matmul_explorer (n)", widgets.sharded_matmul_explorer, "n", [2, 4, 8, 16]),
    ("matmul_explorer (chip)", widgets.matmul_explorer, "chip", ["H100 SXM", "TPU v5e"]),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="control changes per case")
    args = parser.parse_args()
    print(f"{'case':32s} {'median':>8s} {'min':>7s} {'p90':>7s} {'max':>7s}  (ms per change)")
    worst = 0.0
    made = {}
    for label, make, key, values in CASES:
        explorer = made.setdefault(make.__name__, make())
        work_before = dict(explorer.work)
        times = []
        for i in range(args.repeats):
            start = time.perf_counter()
            explorer.set(**{key: values[i % len(values)]})
            times.append((time.perf_counter() - start) * 1e3)
        times.sort()
        median = statistics.median(times)
        p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
        worst = max(worst, median) if "(" not in label else worst
        work = {k: v - work_before.get(k, 0) for k, v in explorer.work.items()}
        done = ", ".join(f"{k} {v}" for k, v in sorted(work.items()) if v)
        print(f"{label:32s} {median:8.1f} {times[0]:7.1f} {p90:7.1f} {times[-1]:7.1f}  ({done})")
    for name, explorer in made.items():
        start = time.perf_counter()
        page = explorer.static_html()
        print(
            f"static fallback {name:24s} {len(page.encode()) / 1e3:7.0f} kB in "
            f"{time.perf_counter() - start:.2f} s"
        )
    print(f"slowest median over the main controls: {worst:.1f} ms (target < 50 ms)")
    return 0 if worst < 50 else 1


if __name__ == "__main__":
    raise SystemExit(main())
