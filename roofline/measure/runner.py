"""Run the measurement: bandwidth sweep, matmul peaks, measured operations, accelerator.

`measure()` returns a `MeasureResult` holding every raw timing. Its `.chip` is a
`roofline.Chip` built from them (usable in `roofline.estimate` and the plots), its
`.points()` the measured operations as roofline points, and `.save_json()` /
`load_result()` keep it for later. Ctrl-C during a run returns what was measured
so far, marked `partial`.

Threads: the bandwidth sweep, the matmul peak of `.chip` and the timed operations
all run on ONE thread (BLAS is limited to one while they run), so the peak and the
bandwidths of `.chip` share a thread count. A last step measures the matmul peak
and the main-memory bandwidth again on all of BLAS's threads: `.chip_all_threads`,
and `.ridges()` lists both ridge points, each labelled with its thread count.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..costs import Cost, dot, elementwise, matmul
from ..estimate import estimate
from ..hardware import Chip, Peak, Source
from ..units import format_bandwidth, format_bytes, format_flops_rate, format_intensity, format_time
from .accelerator import AcceleratorResult, measure_accelerator
from .analysis import Levels, TimedSample, combine_best, memory_levels
from .bandwidth import KERNELS, BandwidthSample, measure_kernel, sweep_sizes
from .matmul import (
    MATMUL_PLANS,
    MatmulSample,
    blas_threads,
    limit_blas_threads,
    ramp_matmul,
)

__all__ = [
    "MeasureResult",
    "OperationSample",
    "IncompleteMeasurement",
    "InsufficientMemoryError",
    "measure",
    "load_result",
    "load_chip",
    "settings_for",
    "available_memory_bytes",
    "last_level_cache_bytes",
    "check_memory",
    "Progress",
]

FORMAT_VERSION = 1


class InsufficientMemoryError(MemoryError):
    """The requested sizes need more memory than this machine has free."""


class IncompleteMeasurement(RuntimeError):
    """A partial result lacks what a Chip needs (a memory plateau and a matmul peak)."""


# ------------------------------------------------------------ the machine
def available_memory_bytes() -> int:
    """Memory free for new allocations: MemAvailable from /proc/meminfo, else SC_AVPHYS_PAGES."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**34  # unknown (macOS, Windows): assume 16 GiB and let the OS object


def physical_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**34


def last_level_cache_bytes(default: int = 32 * 2**20) -> int:
    """The largest CPU cache the OS reports (a VM may report the host's). `default` if unknown."""
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in os.listdir(base):
            try:
                with open(os.path.join(base, entry, "size"), encoding="ascii") as f:
                    text = f.read().strip()
            except OSError:
                continue
            mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:].upper(), 1)
            digits = text[:-1] if mult != 1 else text
            if digits.isdigit():
                best = max(best, int(digits) * mult)
    except OSError:
        pass
    if not best:
        try:
            best = max(0, os.sysconf("SC_LEVEL3_CACHE_SIZE"))
        except (ValueError, OSError, AttributeError):
            best = 0
    return best or default


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def check_memory(
    needed_bytes: float,
    available: float | None = None,
    what: str = "this run",
    fraction: float = 0.8,
) -> None:
    """Raise InsufficientMemoryError, before anything is allocated, if `needed_bytes` will not fit."""
    available = available_memory_bytes() if available is None else available
    if needed_bytes > fraction * available:
        raise InsufficientMemoryError(
            f"{what} needs {format_bytes(needed_bytes, binary=True)} of arrays at once, but only "
            f"{format_bytes(available, binary=True)} of memory is free (and {int(100 * fraction)} % "
            "of that is the most this tool will use). Use the quick mode (--quick, quick=True) or a "
            "smaller sweep (--max-bytes, max_bytes=...), or close other programs."
        )


# ------------------------------------------------------------ settings
def settings_for(
    mode: str = "full", llc_bytes: int | None = None, max_bytes: float | None = None
) -> dict:
    """Sizes and repeats for "full", "quick" or "tiny" (tests) runs."""
    llc = llc_bytes or last_level_cache_bytes()
    s: dict[str, Any]  # sizes in bytes, counts, lists of kernels and dtypes: saved as JSON
    if mode == "full":
        s = dict(
            min_ws=32 * 2**10,
            max_ws=3 * 4 * llc,
            per_octave=4,
            repeats=10,
            target_bytes=32e6,
            matmul_n=2048,
            matmul_repeats=5,
            op_small=2**12,
            op_python=20_000,
            op_matmuls=(16, 64, 256, 1024),
            op_repeats=7,
        )
    elif mode == "quick":
        s = dict(
            min_ws=64 * 2**10,
            max_ws=min(2 * 4 * llc, 256 * 2**20),
            per_octave=2,
            repeats=3,
            target_bytes=8e6,
            matmul_n=1024,
            matmul_repeats=3,
            op_small=2**12,
            op_python=20_000,
            op_matmuls=(16, 64, 256),
            op_repeats=3,
        )
    elif mode == "tiny":
        s = dict(
            min_ws=16 * 2**10,
            max_ws=2**20,
            per_octave=1,
            repeats=2,
            target_bytes=1e5,
            matmul_n=64,
            matmul_repeats=2,
            op_small=2**10,
            op_python=500,
            op_matmuls=(8, 32),
            op_repeats=2,
        )
    else:
        raise ValueError(f"mode must be 'full', 'quick' or 'tiny', got {mode!r}")
    if max_bytes is not None:
        if not max_bytes >= s["min_ws"]:
            raise ValueError(f"max_bytes must be at least {format_bytes(s['min_ws'], binary=True)}")
        s["max_ws"] = min(s["max_ws"], max_bytes)
    s["op_large"] = int(s["max_ws"] // (3 * 8))  # three fp64 arrays fill the largest working set
    # the all-thread main-memory step: every kernel in full mode, the add alone in short runs
    s["threaded_kernels"] = list(KERNELS) if mode == "full" else ["add"]
    # both peaks on all threads in every mode: chapter 9's roofline of the reader's machine
    # uses them; the matmul sizes ramp up from matmul_n (matmul.MATMUL_PLANS)
    s["threaded_dtypes"] = ["fp64", "fp32"]
    s["matmul_n"] = MATMUL_PLANS[mode]["n_min"]
    s["threaded_ws"] = s["max_ws"] // 2 if mode == "quick" else s["max_ws"]
    s["mode"] = mode
    s["llc_bytes"] = llc
    return s


def load_average() -> float | None:
    """The 1-minute load average when the run starts (None where the OS has none): near 0
    on a quiet machine; near the core count or above, other programs share the cores."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def busy_note(load: float | None, cores: int) -> str:
    """A sentence on how busy the machine was, from its load average ('' when quiet/unknown)."""
    if load is None or load < 0.5 * max(cores, 1):
        return ""
    return (
        f"the load average was {load:.1f} on {cores} core{'s' if cores > 1 else ''} when it "
        "started: other programs were running, so the figures are lower and noisier than a "
        "quiet run's"
    )


def largest_matmul_n(available_bytes: float | None = None) -> int:
    """The largest power-of-two n whose three fp64 n x n matrices take at most a quarter of
    the available memory (at least 64)."""
    available = available_memory_bytes() if available_bytes is None else available_bytes
    n = 64
    while 3 * 8 * (2 * n) ** 2 <= available / 4 and n < 2**15:
        n *= 2
    return n


def bytes_needed(settings: dict) -> float:
    """The most memory a run holds at once (the largest of its steps)."""
    return max(settings["max_ws"], 3 * 8 * settings["op_large"], 3 * 8 * settings["matmul_n"] ** 2)


# ------------------------------------------------------------ progress
class Progress:
    """A one-line text progress bar on stderr (nothing when disabled)."""

    def __init__(self, total: int, enabled: bool, stream=None, width: int = 24):
        self.total, self.enabled, self.done, self.width = max(total, 1), enabled, 0, width
        self.stream = stream if stream is not None else sys.stderr
        self.started = time.perf_counter()

    def step(self, label: str) -> None:
        if not self.enabled:
            return
        filled = int(self.width * self.done / self.total)
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.perf_counter() - self.started
        self.stream.write(
            f"\rmeasuring [{bar}] {self.done}/{self.total} {elapsed:5.1f} s  {label:<40.40}"
        )
        self.stream.flush()
        self.done += 1

    def close(self, note: str = "done") -> None:
        if self.enabled:
            self.stream.write(f"\rmeasuring [{'#' * self.width}] {note:<60}\n")
            self.stream.flush()


# ------------------------------------------------------------ operations
@dataclass
class OperationSample(TimedSample):
    """An operation timed for the roofline plot: its cost (FLOPs, bytes) and its times."""

    label: str
    cost: Cost
    working_set: float
    times: list = field(default_factory=list)

    @property
    def flops_per_s(self) -> float:
        return self.cost.flops / self.best_time

    @property
    def intensity(self) -> float:
        return self.cost.intensity

    def to_dict(self) -> dict:
        c = self.cost
        return {
            "label": self.label,
            "working_set": self.working_set,
            "times": list(self.times),
            "cost": {"name": c.name, "flops": c.flops, "bytes": c.bytes, "dtype": c.dtype},
        }

    @classmethod
    def from_dict(cls, d: dict) -> OperationSample:
        c = d["cost"]
        return cls(
            d["label"],
            Cost(c["name"], c["flops"], c["bytes"], c["dtype"]),
            float(d["working_set"]),
            [float(t) for t in d["times"]],
        )


def _time_calls(fn, repeats, inner, timer, sample):
    fn()  # warm-up
    for _ in range(repeats):
        start = timer()
        for _ in range(inner):
            fn()
        sample.times.append((timer() - start) / inner)


def _operation_plan(settings: dict) -> list:
    """(label, cost, working set, setup) for each operation; setup() returns the call to time."""
    plan = []

    def vectors(n, k):
        return [np.full(n, 1.0 + i) for i in range(k)]

    def dot_setup(n):
        def setup():
            x, y = vectors(n, 2)
            return lambda: np.dot(x, y)

        return setup

    def add_setup(n):
        def setup():
            x, y, z = vectors(n, 3)
            return lambda: np.add(x, y, out=z)

        return setup

    def matmul_setup(n):
        def setup():
            rng = np.random.default_rng(1)
            a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
            c = np.empty((n, n))
            return lambda: np.matmul(a, b, out=c)

        return setup

    def python_setup(n):
        def setup():
            xs = [1.0 + i % 7 for i in range(n)]
            ys = [2.0 - i % 5 for i in range(n)]

            def loop():
                total = 0.0
                for a, b in zip(xs, ys):
                    total += a * b
                return total

            return loop

        return setup

    small, large = settings["op_small"], settings["op_large"]
    plan.append((f"dot, N={small} (in cache)", dot(small, "fp64"), 2 * 8 * small, dot_setup(small)))
    plan.append(
        (f"dot, N={large:.2g} (main memory)", dot(large, "fp64"), 2 * 8 * large, dot_setup(large))
    )
    plan.append(
        (
            f"add, N={small} (in cache)",
            elementwise(small, "fp64", name="add"),
            3 * 8 * small,
            add_setup(small),
        )
    )
    plan.append(
        (
            f"add, N={large:.2g} (main memory)",
            elementwise(large, "fp64", name="add"),
            3 * 8 * large,
            add_setup(large),
        )
    )
    for n in settings["op_matmuls"]:
        plan.append((f"matmul n={n}", matmul(n, n, n, "fp64"), 3 * 8 * n * n, matmul_setup(n)))
    p = settings["op_python"]
    plan.append((f"Python loop dot, N={p}", dot(p, "fp64"), 2 * 8 * p, python_setup(p)))
    return plan


# ------------------------------------------------------------ the result
@dataclass
class MeasureResult:
    """Everything one run measured, raw, plus the analysis built on it."""

    host: str
    date: str
    cpu: str
    settings: dict
    bandwidth: list = field(default_factory=list)  # BandwidthSample, one thread
    matmuls: list = field(default_factory=list)  # MatmulSample, one thread and all threads
    operations: list = field(default_factory=list)  # OperationSample, one thread
    accelerator: AcceleratorResult | None = None
    accelerator_message: str = ""
    partial: bool = False
    interrupted_during: str | None = None
    memory_bytes: float = 0.0
    seconds: float = 0.0
    threaded_bandwidth: list = field(
        default_factory=list
    )  # BandwidthSample, all threads, main memory

    # -- analysis
    def curves(self, statistic: str = "best") -> dict:
        """kernel -> (working sets in bytes, bandwidths in bytes/s), sizes increasing."""
        if statistic not in ("best", "median"):
            raise ValueError("statistic must be 'best' or 'median'")
        out = {}
        for name in KERNELS:
            samples = sorted(
                (s for s in self.bandwidth if s.kernel == name and s.times),
                key=lambda s: s.working_set,
            )
            if samples:
                out[name] = (
                    [s.working_set for s in samples],
                    [getattr(s, statistic) for s in samples],
                )
        return out

    def levels(self, kernel: str | None = None, statistic: str = "best") -> Levels:
        """The memory plateaus: of one kernel, or (None) of the best kernel at each size."""
        curves = self.curves(statistic)
        if not curves:
            raise IncompleteMeasurement(
                "no bandwidth was measured (the run stopped before the sweep)"
            )
        if kernel is not None:
            if kernel not in curves:
                raise ValueError(f"no {kernel!r} timings; measured: {', '.join(curves)}")
            return memory_levels(*curves[kernel])
        return memory_levels(*combine_best(curves))

    @property
    def threads(self) -> int:
        """The most threads any step of this run used (1 when only one thread was measured)."""
        counts = [m.threads for m in self.matmuls if m.threads] + [
            s.threads for s in self.threaded_bandwidth
        ]
        return max(counts, default=1)

    def _matmuls(self, dtype: str, threads: int):
        """Matmul samples of `dtype` on `threads` threads (one thread: also unrecorded counts)."""
        wanted = (1, None) if threads == 1 else (threads,)
        return [m for m in self.matmuls if m.dtype == dtype and m.times and m.threads in wanted]

    def peak(self, dtype: str = "fp64", statistic: str = "best", threads: int = 1) -> float:
        """Peak FLOP/s of the `dtype` matmul on `threads` threads (the best or median repeat)."""
        rates = [getattr(m, statistic) for m in self._matmuls(dtype, threads)]
        if not rates:
            raise IncompleteMeasurement(f"no {dtype} matmul was measured on {threads} thread(s)")
        return max(rates)

    def threaded_main_memory(self) -> float:
        """Main-memory bandwidth on all threads: the best kernel's best repeat, in bytes/s."""
        samples = [s for s in self.threaded_bandwidth if s.times]
        if not samples:
            raise IncompleteMeasurement(
                "main-memory bandwidth was not measured on several threads "
                "(one-core machine, or the run stopped before that step)"
            )
        return max(s.best for s in samples)

    def ridges(self, dtype: str = "fp64") -> list[dict]:
        """Ridge points with the peak and the bandwidth measured on the same threads.

        One row per thread count measured: threads, peak FLOP/s, main-memory bytes/s and
        their ratio, the ridge point in FLOPs/byte.
        """
        chip = self.chip
        rows = [
            {
                "threads": 1,
                "peak_flops_per_s": chip.peak_flops_per_s(dtype),
                "bytes_per_s": chip.hbm_bytes_per_s,
            }
        ]
        if self.threads > 1:
            try:
                rows.append(
                    {
                        "threads": self.threads,
                        "peak_flops_per_s": self.peak(dtype, threads=self.threads),
                        "bytes_per_s": self.threaded_main_memory(),
                    }
                )
            except IncompleteMeasurement:
                pass
        for row in rows:
            row["ridge"] = row["peak_flops_per_s"] / row["bytes_per_s"]
        return rows

    @property
    def chip_all_threads(self) -> Chip:
        """This machine on all of BLAS's threads: that matmul peak, that main-memory bandwidth."""
        n = self.threads
        if n == 1:
            return self.chip
        where = f"measured on {self.host} {self.date}"
        peaks = []
        for dtype in ("fp64", "fp32"):
            samples = self._matmuls(dtype, n)
            if samples:
                best = max(samples, key=lambda m: m.best)
                peaks.append(
                    Peak(
                        dtype,
                        best.best,
                        Source(
                            where,
                            (
                                f"np.matmul(A, B, out=C), n={best.n}, on {n} BLAS threads, fastest of "
                                f"{len(best.times)} timed runs: {format_flops_rate(best.best)}"
                            ),
                        ),
                    )
                )
        if not peaks:
            raise IncompleteMeasurement(f"no matmul was measured on {n} threads")
        bandwidth = self.threaded_main_memory()
        return Chip(
            name=f"{self.host} ({n} threads, measured)",
            vendor="measured",
            peaks=tuple(peaks),
            hbm_bytes=float(self.memory_bytes or physical_memory_bytes()),
            hbm_bytes_per_s=bandwidth,
            memory_kind="DRAM",
            memory_source=Source(
                where,
                (
                    f"STREAM-style numpy kernels on {n} threads at once, each on "
                    f"its own piece of the arrays, best kernel: "
                    f"{format_bandwidth(bandwidth)}"
                ),
            ),
            notes=f"{self.cpu}; peak and bandwidth both on {n} threads",
        )

    @property
    def chip(self) -> Chip:
        """This machine as a `roofline.Chip`: measured peaks, main-memory and cache bandwidths."""
        levels = self.levels()
        where = f"measured on {self.host} {self.date}"
        peaks = []
        for dtype in ("fp64", "fp32"):
            samples = self._matmuls(dtype, 1)
            if samples:
                best = max(samples, key=lambda m: m.best)
                threads = "1 BLAS thread" if best.threads == 1 else "BLAS threads not recorded"
                rate, says = (
                    best.best,
                    (
                        f"np.matmul(A, B, out=C), n={best.n}, {threads}, FLOPs = 2n^3, fastest of "
                        f"{len(best.times)} timed runs after a warm-up: {format_flops_rate(best.best)} "
                        f"(median {format_flops_rate(best.median)})"
                    ),
                )
                # a smaller matmul among the operations may have caught the CPU at a better moment
                ops = [
                    o
                    for o in self.operations
                    if o.times
                    and o.cost.name == "matmul"
                    and o.cost.dtype == dtype
                    and o.flops_per_s > rate
                ]
                if ops:
                    top = max(ops, key=lambda o: o.flops_per_s)
                    rate = top.flops_per_s
                    says += f"; raised to {format_flops_rate(rate)}, reached by {top.label}"
                peaks.append(Peak(dtype, rate, Source(where, says)))
        if not peaks:
            raise IncompleteMeasurement(
                "no matmul was measured, so there is no peak FLOP/s "
                "(the run stopped early); run the measurement again"
            )
        main = levels.main_memory
        reached = (
            ""
            if levels.main_memory_reached
            else "; the sweep ended before bandwidth levelled off, so this is an upper bound"
        )
        return Chip(
            name=f"{self.host} (measured)",
            vendor="measured",
            peaks=tuple(peaks),
            hbm_bytes=float(self.memory_bytes or physical_memory_bytes()),
            hbm_bytes_per_s=main.bytes_per_s,
            memory_kind="DRAM",
            memory_source=Source(
                where,
                (
                    "STREAM-style numpy sweep (copy, scale, add), best kernel at each size; "
                    f"median of the plateau at working sets {format_bytes(main.min_working_set, binary=True)}"
                    f" to {format_bytes(main.max_working_set, binary=True)}: "
                    f"{format_bandwidth(main.bytes_per_s)}{reached}"
                ),
            ),
            extra_memories=tuple(levels.named()),
            notes=f"{self.cpu}; bandwidth, matmul peak and operations all on one thread"
            + ("; partial measurement" if self.partial else ""),
        )

    def level_for(self, working_set: float) -> tuple[str, float]:
        """(name, bytes/s) of the fastest measured level whose plateau held this working set."""
        levels = self.levels()
        for (name, bw), plateau in zip(levels.named(), levels.caches):
            if working_set <= plateau.max_working_set:
                return name, bw
        return "DRAM", levels.main_memory.bytes_per_s

    def predictions(self) -> list[dict]:
        """For each measured operation: measured time vs the roofline's prediction on `.chip`.

        `predicted` uses main-memory bandwidth; `predicted_level` the bandwidth of the
        level that holds the operation's data (`level`).
        """
        chip = self.chip
        rows = []
        for op in self.operations:
            if not op.times:
                continue
            est = estimate(op.cost, chip, dtype=op.cost.dtype)
            level, bw = self.level_for(op.working_set)
            est_level = estimate(op.cost, chip, dtype=op.cost.dtype, bandwidth_bytes_per_s=bw)
            rows.append(
                {
                    "label": op.label,
                    "intensity": op.intensity,
                    "flops_per_s": op.flops_per_s,
                    "measured": op.best_time,
                    "median": op.median_time,
                    "predicted": est.t_lower,
                    "bound": est.bound,
                    "level": level,
                    "predicted_level": est_level.t_lower,
                    "ratio": op.best_time / est.t_lower,
                    "ratio_level": op.best_time / est_level.t_lower,
                }
            )
        return rows

    def points(self):
        """The measured operations as `roofline.plots.Point`s (label, intensity, FLOP/s)."""
        from ..plots import Point

        return [Point(op.label, op.intensity, op.flops_per_s) for op in self.operations if op.times]

    # -- text
    def table(self) -> str:
        """This machine's roofline as a text table (units by roofline.units)."""
        lines = [
            f"Roofline of {self.host} ({self.cpu}), measured {self.date}, {self.settings.get('mode')} mode"
            f" in {self.seconds:.1f} s"
        ]
        busy = self.busy_note()
        if busy:
            lines.append(f"note: {busy}.")
        if self.partial:
            lines.append(
                f"PARTIAL RESULT: interrupted during {self.interrupted_during}; "
                "figures below are what was measured before that"
            )
        lines += self._memory_table()
        lines += self._matmul_table()
        try:
            chip = self.chip
        except IncompleteMeasurement:
            chip = None
        if chip is not None:
            lines += self._chip_table(chip)
        lines.append("")
        if self.accelerator is not None:
            lines.append(self.accelerator.report())
        elif self.accelerator_message:
            lines.append(self.accelerator_message)
        return "\n".join(lines)

    def _memory_table(self) -> list[str]:
        """Rows of the table for memory: each cache level's and main memory's bandwidth
        (bytes/s) with the working sets (bytes) of its plateau, then each kernel's plateaus;
        one line saying why when the sweep cannot name the levels."""
        lines = []
        try:
            levels = self.levels()
        except IncompleteMeasurement as error:
            return [f"memory: {error}"]
        lines.append("")
        lines.append(f"{'memory level':<24} {'bandwidth':>12}  working sets")
        for (name, _), p in zip(levels.named(), levels.caches):
            lines.append(
                f"{name:<24} {format_bandwidth(p.bytes_per_s):>12}  "
                f"{format_bytes(p.min_working_set, binary=True)} - "
                f"{format_bytes(p.max_working_set, binary=True)}"
            )
        m = levels.main_memory
        note = "" if levels.main_memory_reached else "  (no plateau yet: upper bound)"
        lines.append(
            f"{'main memory (DRAM)':<24} {format_bandwidth(m.bytes_per_s):>12}  "
            f"{format_bytes(m.min_working_set, binary=True)} - "
            f"{format_bytes(m.max_working_set, binary=True)}{note}"
        )
        for kernel, (sizes, bws) in self.curves().items():
            kl = memory_levels(sizes, bws)
            lines.append(
                f"  {kernel:<6} plateaus: "
                + ", ".join(format_bandwidth(p.bytes_per_s) for p in kl.plateaus)
            )
        return lines

    def _matmul_table(self) -> list[str]:
        """Rows of the table for the matmuls timed: dtype, n, threads, best and median FLOP/s."""
        lines = []
        if self.matmuls:
            lines.append("")
            lines.append(f"{'matmul':<24} {'best':>14} {'median':>14}")
            for m in self.matmuls:
                if m.times:
                    on = (
                        ""
                        if m.threads is None
                        else f", {m.threads} thread{'s' if m.threads > 1 else ''}"
                    )
                    lines.append(
                        f"{m.dtype + ' n=' + str(m.n) + on:<24} {format_flops_rate(m.best):>14} "
                        f"{format_flops_rate(m.median):>14}"
                    )
        return lines

    def _chip_table(self, chip) -> list[str]:
        """Rows of the table from the measured chip: one-thread ridge points (FLOPs/byte) per
        dtype, the all-thread main memory, peaks and ridges, warnings on peaks, and each
        operation's intensity, FLOP/s and measured against predicted time (s)."""
        from ..estimate import critical_intensity

        lines = [""]
        for dtype in chip.dtypes:
            lines.append(
                f"ridge point {dtype}, 1 thread: {format_intensity(critical_intensity(chip, dtype))}"
                f" (peak / {chip.memory_kind} bandwidth, both on one thread)"
            )
        if self.threaded_bandwidth:
            lines.append("")
            lines.append(
                f"all {self.threads} threads: main memory "
                f"{format_bandwidth(self.threaded_main_memory())}"
            )
            for row in self._all_thread_rows():
                lines.append(
                    f"  matmul {row['dtype']} peak {format_flops_rate(row['peak_flops_per_s'])}, "
                    f"ridge point {format_intensity(row['ridge'])} (both on {self.threads} threads)"
                )
        lines += self.peak_warnings()
        rows = self.predictions()
        if rows:
            lines.append("")
            lines.append(
                f"{'operation':<34} {'intensity':>14} {'achieved':>14} {'measured':>10} "
                f"{'predicted':>10} {'meas/pred':>9}"
            )
            for r in rows:
                lines.append(
                    f"{r['label']:<34} {format_intensity(r['intensity']):>14} "
                    f"{format_flops_rate(r['flops_per_s']):>14} {format_time(r['measured']):>10} "
                    f"{format_time(r['predicted']):>10} {r['ratio']:>9.2f}"
                )
        return lines

    def peak_warnings(self) -> list[str]:
        """Plain sentences for each peak this run did not measure, or may have measured
        below the best shape (its largest matmul was still its fastest)."""
        lines = []
        counts = sorted({1, self.threads})
        for dtype in ("fp64", "fp32"):
            for threads in counts:
                on = f"{threads} thread{'s' if threads > 1 else ''}"
                samples = self._matmuls(dtype, threads)
                if not samples:
                    lines.append(f"NOT MEASURED: the {dtype} matmul peak on {on}.")
                    continue
                largest = max(samples, key=lambda m: m.n)
                rising = len(samples) > 1 and largest.best >= 1.1 * min(m.best for m in samples)
                if rising and largest is max(samples, key=lambda m: m.best):
                    lines.append(
                        f"note: the {dtype} peak on {on} was still rising at n={largest.n}, "
                        "where the time budget stopped; the full mode tries larger sizes."
                    )
        return lines

    def busy_note(self) -> str:
        """How busy the machine was when this run started ('' when quiet or unknown)."""
        cores = self.settings.get("cores") or os.cpu_count() or 1
        return busy_note(self.settings.get("load_average"), cores)

    def _all_thread_rows(self) -> list[dict]:
        rows = []
        for dtype in ("fp64", "fp32"):
            try:
                row = self.ridges(dtype)
            except (IncompleteMeasurement, ValueError):
                continue
            if len(row) > 1:
                rows.append(dict(row[1], dtype=dtype))
        return rows

    def __str__(self) -> str:
        return self.table()

    # -- JSON
    def to_dict(self) -> dict:
        d = {
            "format": "roofline-measurement",
            "version": FORMAT_VERSION,
            "host": self.host,
            "date": self.date,
            "cpu": self.cpu,
            "settings": self.settings,
            "memory_bytes": self.memory_bytes,
            "seconds": self.seconds,
            "partial": self.partial,
            "interrupted_during": self.interrupted_during,
            "bandwidth": [s.to_dict() for s in self.bandwidth],
            "matmuls": [m.to_dict() for m in self.matmuls],
            "operations": [o.to_dict() for o in self.operations],
            "threaded_bandwidth": [s.to_dict() for s in self.threaded_bandwidth],
            "accelerator": None if self.accelerator is None else self.accelerator.to_dict(),
            "accelerator_message": self.accelerator_message,
        }
        try:  # a readable summary; the loader recomputes it from the raw timings
            chip = self.chip
            d["summary"] = {
                "peaks_flops_per_s": {p.dtype: p.dense_flops_per_s for p in chip.peaks},
                "memory_levels_bytes_per_s": chip.memory_levels(),
            }
        except IncompleteMeasurement:
            pass
        return d

    def save_json(self, path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=1)

    @classmethod
    def from_dict(cls, d: dict) -> MeasureResult:
        if d.get("format") != "roofline-measurement":
            raise ValueError("this is not a file saved by `python -m roofline measure --json`")
        if d.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"measurement file version {d.get('version')} is not supported "
                f"(this roofline reads version {FORMAT_VERSION}); measure again"
            )
        acc = d.get("accelerator")
        return cls(
            host=d["host"],
            date=d["date"],
            cpu=d.get("cpu", ""),
            settings=d.get("settings", {}),
            bandwidth=[BandwidthSample.from_dict(s) for s in d["bandwidth"]],
            matmuls=[MatmulSample.from_dict(m) for m in d["matmuls"]],
            operations=[OperationSample.from_dict(o) for o in d["operations"]],
            accelerator=None if acc is None else AcceleratorResult.from_dict(acc),
            accelerator_message=d.get("accelerator_message", ""),
            partial=bool(d.get("partial")),
            interrupted_during=d.get("interrupted_during"),
            memory_bytes=float(d.get("memory_bytes", 0.0)),
            seconds=float(d.get("seconds", 0.0)),
            threaded_bandwidth=[
                BandwidthSample.from_dict(s) for s in d.get("threaded_bandwidth", [])
            ],
        )


REFERENCE_FILE = Path(__file__).with_name("reference_run.json")


def page_example(own: MeasureResult, reference=REFERENCE_FILE) -> tuple[MeasureResult, str]:
    """The run chapter 9's prose quotes, and the words naming its machine.

    The stored reference run (`tools/measure_reference.py`, taken on a quiet machine) when
    the file exists; else `own`, the run that built the page, named as such, with a word on
    how busy its machine was. The prose never calls these figures the reader's own."""
    path = Path(reference)
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        example = MeasureResult.from_dict(data)
        info = data.get("reference", {})
        quiet = "with nothing else running" if info.get("quiet") else "on a busy machine"
        return example, (
            f"the reference machine ({info.get('machine') or example.cpu}, "
            f"{example.threads} BLAS threads, measured {example.date[:10]} in "
            f"{example.settings.get('mode', 'full')} mode {quiet})"
        )
    busy = own.busy_note()
    return own, (
        f"the machine that built this page ({own.cpu}, {own.threads} BLAS "
        f"thread{'s' if own.threads > 1 else ''}, measured while building, "
        f"{own.settings.get('mode', 'full')} mode" + (f"; {busy}" if busy else "") + ")"
    )


def load_result(path) -> MeasureResult:
    """Read a measurement saved with `--json FILE` (or `MeasureResult.save_json`)."""
    with open(path, encoding="utf-8") as f:
        return MeasureResult.from_dict(json.load(f))


def load_chip(path) -> Chip:
    """The measured `Chip` from a saved measurement, ready for `roofline.estimate` and the plots."""
    return load_result(path).chip


# ------------------------------------------------------------ the run
def measure(
    quick: bool = False,
    *,
    mode: str | None = None,
    kernels=tuple(KERNELS),
    dtypes=("fp64", "fp32"),
    operations: bool = True,
    accelerator: bool = True,
    max_bytes: float | None = None,
    timer=time.perf_counter,
    progress: bool | None = None,
    available_bytes: float | None = None,
    llc_bytes: int | None = None,
    all_threads: bool = True,
) -> MeasureResult:
    """Measure this machine's roofline. `quick=True` for a short run (a few seconds).

    The sweep, the matmul peak and the operations run on one thread; with
    `all_threads` (and more than one BLAS thread) a last step measures the fp64 and fp32
    matmul peaks and the main-memory bandwidth again on all of BLAS's threads (every kernel
    in full mode; in quick mode the add kernel on half the largest working set). Each
    matmul peak is the best of a ramp of sizes (`matmul.ramp_matmul`: the first n grows
    with the thread count, then n doubles while the mode's time budget allows).
    `mode` ("full", "quick", "tiny") overrides `quick`; "tiny" is for tests.
    `timer` (seconds, like time.perf_counter) and `available_bytes` can be injected.
    Raises InsufficientMemoryError before allocating if the sizes will not fit.
    Ctrl-C (KeyboardInterrupt) returns the partial result, with `.partial` True.
    """
    mode = mode or ("quick" if quick else "full")
    settings = settings_for(mode, llc_bytes=llc_bytes, max_bytes=max_bytes)
    for k in kernels:
        if k not in KERNELS:
            raise ValueError(f"unknown kernel {k!r}; choose from {', '.join(KERNELS)}")
    check_memory(bytes_needed(settings), available_bytes, what=f"the {mode} measurement")
    result = _new_result(settings, kernels)
    sizes = sweep_sizes(settings["min_ws"], settings["max_ws"], settings["per_octave"])
    plan = _operation_plan(settings) if operations else []
    threads = blas_threads() if all_threads else 1
    threaded = threads > 1
    threaded_kernels, threaded_dtypes = _all_thread_work(kernels, dtypes, settings)
    steps = len(sizes) * len(kernels) + len(dtypes) + len(plan) + (1 if accelerator else 0)
    steps += len(threaded_dtypes) + len(threaded_kernels) if threaded else 0
    bar = Progress(steps, sys.stderr.isatty() if progress is None else progress)
    start = time.perf_counter()
    label = "start"

    def step(text: str) -> None:
        """Show the step on the progress bar and remember it for an interrupt's message."""
        nonlocal label
        label = text
        bar.step(text)

    try:
        _sweep_bandwidth(result, sizes, kernels, settings, timer, step)
        n_cap = largest_matmul_n(available_bytes)
        for dtype in dtypes:
            step(f"matmul: {dtype}, 1 thread")
            ramp_matmul(dtype, mode, 1, settings["matmul_repeats"], n_cap, timer, result.matmuls)
        _time_operations(result, plan, settings, timer, step)
        if threaded:
            for dtype in threaded_dtypes:
                step(f"matmul: {dtype}, {threads} threads")
                ramp_matmul(
                    dtype, mode, threads, settings["matmul_repeats"], n_cap, timer, result.matmuls
                )
            _threaded_bandwidth(result, threaded_kernels, threads, sizes, settings, timer, step)
        if accelerator:
            step("accelerator")
            result.accelerator, result.accelerator_message = measure_accelerator(
                quick=mode != "full"
            )
    except KeyboardInterrupt:
        result.partial = True
        result.interrupted_during = label
        bar.close(f"interrupted during {label}: keeping what was measured")
    else:
        bar.close()
    _drop_untimed(result)
    result.seconds = time.perf_counter() - start
    return result


def _all_thread_work(kernels, dtypes, settings: dict) -> tuple[list, list]:
    """The kernels and dtypes the all-thread step measures: those the mode names, else the
    first kernel and the first dtype asked for."""
    threaded_kernels = [k for k in kernels if k in settings["threaded_kernels"]] or list(kernels)[
        :1
    ]
    threaded_dtypes = [d for d in dtypes if d in settings["threaded_dtypes"]] or list(dtypes)[:1]
    return threaded_kernels, threaded_dtypes


def _new_result(settings: dict, kernels) -> MeasureResult:
    """An empty result stamped with this host, the local time, the CPU model, the load average,
    the core count and the physical memory (bytes); `settings` gains load_average and cores."""
    now = datetime.datetime.now().astimezone()
    settings["load_average"] = load_average()
    settings["cores"] = os.cpu_count() or 1
    return MeasureResult(
        host=socket.gethostname() or "this machine",
        date=now.strftime("%Y-%m-%d %H:%M"),
        cpu=cpu_model(),
        settings=dict(settings, kernels=list(kernels)),
        memory_bytes=float(physical_memory_bytes()),
    )


def _sweep_bandwidth(result, sizes, kernels, settings, timer, step) -> None:
    """The one-thread bandwidth sweep: every kernel at every working set (bytes), appended to
    `result.bandwidth` (fp64 elements: working set / (arrays x 8 bytes))."""
    for ws in sizes:
        for k in kernels:
            step(f"bandwidth: {k}, {format_bytes(ws, binary=True)}")
            sample = BandwidthSample(k, max(1, ws // (KERNELS[k].arrays * 8)))
            result.bandwidth.append(sample)
            measure_kernel(
                k,
                ws,
                settings["repeats"],
                target_bytes=settings["target_bytes"],
                timer=timer,
                sample=sample,
            )


def _time_operations(result, plan, settings, timer, step) -> None:
    """Time each planned operation on one BLAS thread, like the roof it is put on; each timing
    repeats the call enough times (1 to 10,000) to last about 2 ms."""
    with limit_blas_threads(1):  # np.dot and matmul on one thread, like the roof they are put on
        for name, cost, ws, setup in plan:
            step(f"operation: {name}")
            op = OperationSample(name, cost, ws)
            result.operations.append(op)
            fn = setup()
            t0 = time.perf_counter()
            fn()
            once = max(time.perf_counter() - t0, 1e-7)
            inner = max(1, min(10_000, int(2e-3 / once)))
            _time_calls(fn, settings["op_repeats"], inner, timer, op)
            del fn


def _threaded_bandwidth(result, kernels, threads, sizes, settings, timer, step) -> None:
    """Main-memory bandwidth on all `threads`: each kernel on the mode's threaded working set
    (bytes; at most the sweep's largest), appended to `result.threaded_bandwidth`."""
    for k in kernels:
        step(f"bandwidth: {k}, main memory, {threads} threads")
        ws = min(settings.get("threaded_ws", sizes[-1]), sizes[-1])
        sample = BandwidthSample(k, max(1, ws // (KERNELS[k].arrays * 8)), threads=threads)
        result.threaded_bandwidth.append(sample)
        measure_kernel(
            k,
            ws,
            settings["repeats"],
            target_bytes=settings["target_bytes"],
            timer=timer,
            sample=sample,
            threads=threads,
        )


def _drop_untimed(result) -> None:
    """Drop the samples an interrupt left without a single timing."""
    result.bandwidth = [s for s in result.bandwidth if s.times]
    result.matmuls = [m for m in result.matmuls if m.times]
    result.operations = [o for o in result.operations if o.times]
    result.threaded_bandwidth = [s for s in result.threaded_bandwidth if s.times]
