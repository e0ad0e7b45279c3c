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
import os
import socket
import sys
import time
from typing import Any

from ..units import format_bytes
from .accelerator import SWITCH_RUNTIME, measure_accelerator
from .bandwidth import KERNELS, BandwidthSample, measure_kernel, sweep_sizes
from .machine import (  # noqa: F401  (importable from runner, as before)
    InsufficientMemoryError,
    available_memory_bytes,
    busy_note,
    check_memory,
    cpu_model,
    largest_matmul_n,
    last_level_cache_bytes,
    load_average,
    physical_memory_bytes,
)
from .matmul import (
    MATMUL_PLANS,
    blas_threads,
    limit_blas_threads,
    ramp_matmul,
)
from .reference import (  # noqa: F401  (importable from runner, as before)
    REFERENCE_FILE,
    page_example,
    page_run,
)
from .result import (  # noqa: F401  (importable from runner, as before)
    FORMAT_VERSION,
    IncompleteMeasurement,
    MeasureResult,
    load_chip,
    load_result,
)
from .timing import (  # noqa: F401  (importable from runner, as before)
    OperationSample,
    _operation_plan,
    _time_calls,
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


# ------------------------------------------------------------ settings
#: The modes of a run, longest first: "full" (a minute or more), "quick" (the reader's run in
#: chapter 9, a few tens of seconds), "build" (the book's build: a few seconds, no accelerator)
#: and "tiny" (tests: no main memory, no useful figures).
MODES = ("full", "quick", "build", "tiny")

#: Environment variable naming the mode of every `measure()` call that passes no `mode=`
#: (it overrides `quick`): the book's build sets it to "build" for the kernels it runs, so
#: chapter 9's `measure(quick=True)` takes a few seconds there (the page quotes the stored
#: reference run) while a reader's kernel runs the quick mode the cell asks for.
MODE_VARIABLE = "ROOFLINE_MEASURE_MODE"


def settings_for(
    mode: str = "full", llc_bytes: int | None = None, max_bytes: float | None = None
) -> dict:
    """Sizes and repeats for "full", "quick", "build" (the book's build) or "tiny" (tests)
    runs."""
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
    elif mode == "build":
        # quick's range up to main memory (4 x the last-level cache, STREAM's rule, at most
        # 128 MiB), fewer repeats and bytes per timing; small matmuls (matmul.MATMUL_PLANS)
        s = dict(
            min_ws=64 * 2**10,
            max_ws=min(4 * llc, 128 * 2**20),
            per_octave=2,
            repeats=2,
            target_bytes=2e6,
            matmul_n=256,
            matmul_repeats=2,
            op_small=2**12,
            op_python=20_000,
            op_matmuls=(16, 64, 256),
            op_repeats=2,
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
        raise ValueError(f"mode must be one of {', '.join(map(repr, MODES))}, got {mode!r}")
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
    s["threaded_ws"] = s["max_ws"] // 2 if mode in ("quick", "build") else s["max_ws"]
    s["mode"] = mode
    s["llc_bytes"] = llc
    return s


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
    """Measure this machine's roofline. `quick=True` for a short run (a few tens of seconds).

    The sweep, the matmul peak and the operations run on one thread; with
    `all_threads` (and more than one BLAS thread) a last step measures the fp64 and fp32
    matmul peaks and the main-memory bandwidth again on all of BLAS's threads (every kernel
    in full mode; in quick mode the add kernel on half the largest working set). Each
    matmul peak is the best of a ramp of sizes (`matmul.ramp_matmul`: the first n grows
    with the thread count, then n doubles while the mode's time budget allows).
    `mode` ("full", "quick", "build", "tiny") overrides `quick`; without it the environment
    variable ROOFLINE_MEASURE_MODE (`MODE_VARIABLE`), when set, does: the book's build sets
    "build", a run of a few seconds that leaves the accelerator out. "tiny" is for tests.
    `timer` (seconds, like time.perf_counter) and `available_bytes` can be injected.
    Raises InsufficientMemoryError before allocating if the sizes will not fit.
    Ctrl-C (KeyboardInterrupt) returns the partial result, with `.partial` True.
    """
    mode = mode or os.environ.get(MODE_VARIABLE) or ("quick" if quick else "full")
    if mode == "build":
        accelerator = False  # importing PyTorch and JAX to look for one takes seconds
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
        elif mode == "build":
            result.accelerator_message = BUILD_SKIPS_ACCELERATOR
    except KeyboardInterrupt:
        result.partial = True
        result.interrupted_during = label
        bar.close(f"interrupted during {label}: keeping what was measured")
    else:
        bar.close()
    _drop_untimed(result)
    result.seconds = time.perf_counter() - start
    return result


#: Why a run in the build's mode has no accelerator result.
BUILD_SKIPS_ACCELERATOR = (
    "accelerator skipped: the book's build measures its machine in a few seconds (mode "
    f'"build") and leaves any GPU or TPU out. {SWITCH_RUNTIME}'
)


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
