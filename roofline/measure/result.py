"""The result table of a measurement: `MeasureResult` holds every raw timing, the `Chip` built
from them, the ridge points and the measured operations as roofline points; it saves to and
loads from JSON (`save_json`, `load_result`, `load_chip`, format `FORMAT_VERSION`).

Part of `roofline.measure` (the run is in `runner`, which re-exports these names).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from ..estimate import estimate
from ..hardware import Chip, Peak, Source
from ..units import format_bandwidth, format_bytes, format_flops_rate, format_intensity, format_time
from .accelerator import AcceleratorResult
from .analysis import Levels, combine_best, memory_levels
from .bandwidth import KERNELS, BandwidthSample
from .machine import busy_note, physical_memory_bytes
from .matmul import (
    MATMUL_PLANS,
    MatmulSample,
)
from .timing import OperationSample

FORMAT_VERSION = 1


class IncompleteMeasurement(RuntimeError):
    """A partial result lacks what a Chip needs (a memory plateau and a matmul peak)."""


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
            hbm_bytes_per_s=bandwidth,  # main memory, all threads; the field keeps the GPU name
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
            hbm_bytes_per_s=main.bytes_per_s,  # main memory; the field keeps the GPU name (HBM)
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
        for p in levels.dips:
            lines.append(
                f"not a level: {format_bandwidth(p.bytes_per_s)} at "
                f"{format_bytes(p.min_working_set, binary=True)} - "
                f"{format_bytes(p.max_working_set, binary=True)} (slower than a level further out)"
            )
        for kernel, (sizes, bws) in self.curves().items():
            kl = memory_levels(sizes, bws)
            lines.append(
                f"  {kernel:<6} levels: "
                + ", ".join(format_bandwidth(p.bytes_per_s) for p in kl.plateaus)
                + (" (the last: main memory)" if kl.main_memory_reached else "")
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
        below the best shape (its largest matmul was still its fastest).

        The second kind says what stopped the ramp of sizes and what to do, by the run's mode
        (`settings["mode"]`): the full mode tries larger sizes than "quick", "build" and
        "tiny"; a full run can only say that the peak may be higher."""
        lines = []
        counts = sorted({1, self.threads})
        mode = self.settings.get("mode")
        plan = MATMUL_PLANS.get(mode) if isinstance(mode, str) else None
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
                    if plan is not None and largest.n >= plan["n_max"]:
                        why = f"the largest size the {mode} mode tries"
                    elif plan is not None:
                        why = f"where the {mode} mode's time budget (or the memory) stopped it"
                    else:
                        why = "where the run stopped"
                    advice = (
                        "the full mode (`measure()`, or `python -m roofline measure` without "
                        "--quick) tries larger sizes."
                        if plan is not None and mode != "full"
                        else "the peak may be higher than this run measured."
                    )
                    lines.append(
                        f"note: the {dtype} peak on {on} was still rising at n={largest.n}, "
                        f"{why}; {advice}"
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


def load_result(path) -> MeasureResult:
    """Read a measurement saved with `--json FILE` (or `MeasureResult.save_json`)."""
    with open(path, encoding="utf-8") as f:
        return MeasureResult.from_dict(json.load(f))


def load_chip(path) -> Chip:
    """The measured `Chip` from a saved measurement, ready for `roofline.estimate` and the plots."""
    return load_result(path).chip
