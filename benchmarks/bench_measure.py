"""Side by side on one machine, in one run: roofline.measure vs Debian's `mbw` (bandwidth)
and vs a direct np.matmul timing (FLOP/s). Prints medians and spread.

    .venv/bin/python benchmarks/bench_measure.py [--rounds 5] [--mib 256]

Byte counting: mbw's MEMCPY test copies an array of M MiB and reports MiB/s counting
the bytes *copied once* (M MiB per copy). STREAM (and roofline.measure) counts the read
and the write: 2 x M MiB per copy. So STREAM-equivalent bytes/s = 2 x mbw MiB/s x 2^20.
The machine is shared and the figures are noisy: compare medians, read the spread.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from roofline.measure import measure_kernel, measure_matmul  # noqa: E402
from roofline.units import format_bandwidth, format_flops_rate  # noqa: E402


def mbw_stream_bytes_per_s(mib: int, runs: int = 5) -> list[float] | None:
    """mbw's memcpy figure per run, converted to STREAM-counted bytes/s (None without mbw)."""
    exe = shutil.which("mbw")
    if exe is None:
        return None
    out = subprocess.run(
        [exe, "-q", "-n", str(runs), "-t", "0", str(mib)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rates = [
        float(m) for m in re.findall(r"^\d+\s+Method: MEMCPY.*?Copy:\s*([\d.]+)\s*MiB/s", out, re.M)
    ]
    return [2 * r * 2**20 for r in rates]


def direct_matmul(n: int, dtype, repeats: int) -> list[float]:
    a = np.random.default_rng(0).standard_normal((n, n)).astype(dtype)
    b = np.random.default_rng(1).standard_normal((n, n)).astype(dtype)
    c = np.empty((n, n), dtype)
    np.matmul(a, b, out=c)
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        np.matmul(a, b, out=c)
        rates.append(2 * n**3 / (time.perf_counter() - t))
    return rates


def summary(values, fmt) -> str:
    med = statistics.median(values)
    return (
        f"median {fmt(med)}, min {fmt(min(values))}, max {fmt(max(values))} ({len(values)} values)"
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument(
        "--mib", type=int, default=256, help="array size for the copy (MiB), past the caches"
    )
    p.add_argument("--n", type=int, default=2048, help="matmul size")
    args = p.parse_args(argv)

    ws = 2 * args.mib * 2**20  # copy: two arrays of `mib` MiB, as mbw allocates
    ours, theirs = [], []
    for _ in range(args.rounds):  # interleave the tools so both see the same load
        s = measure_kernel("copy", ws, repeats=3, target_bytes=0)
        ours.append(s.best)
        got = mbw_stream_bytes_per_s(args.mib, runs=3)
        if got:
            theirs.append(max(got))
    print(f"copy bandwidth, {args.mib} MiB arrays, STREAM byte counting (2 x bytes copied):")
    print(f"  roofline.measure copy : {summary(ours, format_bandwidth)}")
    if theirs:
        print(f"  mbw MEMCPY (x2, MiB)  : {summary(theirs, format_bandwidth)}")
        print(
            f"  ratio of medians      : {statistics.median(ours) / statistics.median(theirs):.2f}"
        )
    else:
        print("  mbw not installed (apt-get install mbw): no comparison")

    for dtype, np_dtype in (("fp64", np.float64), ("fp32", np.float32)):
        pkg, direct = [], []
        for _ in range(args.rounds):
            pkg.append(measure_matmul(args.n, dtype, repeats=3).best)
            direct.append(max(direct_matmul(args.n, np_dtype, 3)))
        print(f"matmul {dtype}, n={args.n}, FLOPs = 2n^3:")
        print(f"  roofline.measure      : {summary(pkg, format_flops_rate)}")
        print(f"  direct np.matmul      : {summary(direct, format_flops_rate)}")
        print(f"  ratio of medians      : {statistics.median(pkg) / statistics.median(direct):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
