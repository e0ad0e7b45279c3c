"""Median latency of `check` (target < 50 ms per call), numeric, choice and symbolic.

.venv/bin/python benchmarks/bench_check.py
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from roofline.exercises import check, get_exercise, homework, list_exercises  # noqa: E402

TARGET_S = 0.050


def main() -> int:
    cases = [(eid, get_exercise(eid).expected()) for eid in list_exercises()]
    cases += [
        ("time-1e12-flops-h100", "1.01 us"),
        ("hw-part2-q8", "2*B*D*F"),
        ("hw-part2-q8", "2BDF/n"),
        ("hw-part1-q5", "memory-bound"),
        ("hw-part1-q1", "abc"),
    ]
    check("hw-part2-q8", "2*B*D*F/n")  # first sympy import is not a check's latency
    times = {}
    for eid, answer in cases:
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            check(eid, answer)
            samples.append(time.perf_counter() - start)
        times[(eid, str(answer)[:20])] = statistics.median(samples)
    median = statistics.median(times.values())
    worst_key = max(times, key=times.get)
    box = homework.check("", "part1", "q1", None)
    start = time.perf_counter()
    box._repr_html_()
    render = time.perf_counter() - start
    print(
        f"check: median {median * 1e3:.2f} ms over {len(times)} cases "
        f"(slowest {worst_key[0]} {worst_key[1]!r}: {times[worst_key] * 1e3:.1f} ms); "
        f"answer box render {render * 1e3:.1f} ms; target < {TARGET_S * 1e3:.0f} ms"
    )
    return 0 if median < TARGET_S and times[worst_key] < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
