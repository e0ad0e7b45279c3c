"""Memory bandwidth with STREAM-style numpy kernels.

Three kernels, each a single numpy call that writes into a preallocated array, so
no temporary is made and the bytes moved are exactly what is counted:

==========  ===============================  ===================  ==================
kernel      numpy call                       arrays in the set    bytes counted
==========  ===============================  ===================  ==================
``copy``    ``np.copyto(a, b)``              2                    2 x 8N (read, write)
``scale``   ``np.multiply(b, s, out=a)``     2                    2 x 8N
``add``     ``np.add(b, c, out=a)``          3                    3 x 8N
==========  ===============================  ===================  ==================

As in STREAM, the counted bytes leave out the extra read a CPU cache does before
it overwrites a line ("write allocate"), so the figure is the bandwidth the
program sees, not the traffic on the memory bus.

A numpy call runs on one thread. `measure_kernel(..., threads=n)` splits the arrays
into n contiguous pieces and runs the kernel on each piece in its own thread at
once (numpy lets go of Python's lock inside these loops), as STREAM does with
OpenMP: the bandwidth of n cores together.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .analysis import TimedSample

__all__ = [
    "KERNELS",
    "Kernel",
    "BandwidthSample",
    "bytes_counted",
    "working_set_bytes",
    "sweep_sizes",
    "measure_kernel",
    "ITEMSIZE",
]

ITEMSIZE = 8  # fp64, as in STREAM


@dataclass(frozen=True)
class Kernel:
    """One STREAM-style kernel: how many arrays it touches and how many it counts per element."""

    name: str
    arrays: int  # arrays in the working set (all of them are read or written)
    counted: int  # arrays counted as moved, once each, per call
    call: str  # the numpy call, for tables and docs

    def run(self, arrays, scalar=3.0):
        a, b = arrays[0], arrays[1]
        if self.name == "copy":
            np.copyto(a, b)
        elif self.name == "scale":
            np.multiply(b, scalar, out=a)
        elif self.name == "add":
            np.add(b, arrays[2], out=a)
        else:  # pragma: no cover - KERNELS holds only the three above
            raise ValueError(f"unknown kernel {self.name!r}")


KERNELS: dict[str, Kernel] = {
    "copy": Kernel("copy", arrays=2, counted=2, call="np.copyto(a, b)"),
    "scale": Kernel("scale", arrays=2, counted=2, call="np.multiply(b, s, out=a)"),
    "add": Kernel("add", arrays=3, counted=3, call="np.add(b, c, out=a)"),
}


def _kernel(kernel) -> Kernel:
    if isinstance(kernel, Kernel):
        return kernel
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; choose from {', '.join(KERNELS)}")
    return KERNELS[kernel]


def bytes_counted(kernel, n_elements: int, itemsize: int = ITEMSIZE) -> int:
    """Bytes one call of `kernel` is credited with: copy and scale 2 x 8N, add 3 x 8N."""
    k = _kernel(kernel)
    return k.counted * itemsize * int(n_elements)


def working_set_bytes(kernel, n_elements: int, itemsize: int = ITEMSIZE) -> int:
    """Bytes of all the arrays the kernel touches: what has to fit in a cache."""
    k = _kernel(kernel)
    return k.arrays * itemsize * int(n_elements)


def sweep_sizes(min_bytes: float, max_bytes: float, per_octave: int = 2) -> list[int]:
    """Working-set sizes in bytes, geometric from `min_bytes` to `max_bytes`, `per_octave` per doubling."""
    if not (min_bytes > 0 and max_bytes >= min_bytes):
        raise ValueError(f"need 0 < min_bytes <= max_bytes, got {min_bytes!r} and {max_bytes!r}")
    if per_octave < 1:
        raise ValueError("per_octave must be at least 1")
    steps = int(math.floor(per_octave * math.log2(max_bytes / min_bytes) + 1e-9))
    sizes = [int(round(min_bytes * 2 ** (i / per_octave))) for i in range(steps + 1)]
    return sorted(set(sizes))


@dataclass
class BandwidthSample(TimedSample):
    """Timings of one kernel at one size on `threads` threads. `times`: seconds per call, one per repeat."""

    kernel: str
    n_elements: int
    times: list = field(default_factory=list)
    itemsize: int = ITEMSIZE
    threads: int = 1

    @property
    def bytes(self) -> int:
        return bytes_counted(self.kernel, self.n_elements, self.itemsize)

    @property
    def working_set(self) -> int:
        return working_set_bytes(self.kernel, self.n_elements, self.itemsize)

    @property
    def best(self) -> float:
        """Bytes/s at the fastest repeat (what STREAM reports)."""
        return self.bytes / self.best_time

    @property
    def median(self) -> float:
        """Bytes/s at the median repeat."""
        return self.bytes / self.median_time

    def to_dict(self) -> dict:
        return {
            "kernel": self.kernel,
            "n_elements": self.n_elements,
            "times": list(self.times),
            "itemsize": self.itemsize,
            "threads": self.threads,
        }

    @classmethod
    def from_dict(cls, d: dict) -> BandwidthSample:
        return cls(
            d["kernel"],
            int(d["n_elements"]),
            [float(t) for t in d["times"]],
            int(d.get("itemsize", ITEMSIZE)),
            int(d.get("threads", 1)),
        )


def inner_calls(bytes_per_call: int, target_bytes: float) -> int:
    """How many calls one timing spans, so that tiny arrays are not timed one call at a time."""
    return max(1, int(math.ceil(target_bytes / max(bytes_per_call, 1))))


def measure_kernel(
    kernel,
    working_set: int,
    repeats: int = 5,
    warmup: int = 1,
    target_bytes: float = 8e6,
    timer=time.perf_counter,
    sample: BandwidthSample | None = None,
    threads: int = 1,
) -> BandwidthSample:
    """Time `kernel` on arrays that together take about `working_set` bytes.

    Each repeat times `inner` back-to-back calls (enough to move `target_bytes`)
    and records the time per call. `sample`, when given, is filled in place, so
    a caller keeps the repeats done so far if the run is interrupted. With
    `threads` > 1 every call runs the kernel on `threads` pieces of the arrays at
    once, one thread each; the time is that of the slowest piece.
    """
    k = _kernel(kernel)
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a whole number, 1 or more, got {threads!r}")
    n = max(1, int(working_set) // (k.arrays * ITEMSIZE))
    arrays = [np.full(n, float(i + 1)) for i in range(k.arrays)]  # touch every page now
    inner = inner_calls(bytes_counted(k, n), target_bytes)
    if sample is None:
        sample = BandwidthSample(k.name, n, threads=threads)
    if threads == 1:
        _time_kernel(lambda: k.run(arrays), repeats, warmup, inner, timer, sample)
        return sample
    bounds = [n * i // threads for i in range(threads + 1)]
    pieces = [[a[lo:hi] for a in arrays] for lo, hi in zip(bounds, bounds[1:]) if hi > lo]
    with ThreadPoolExecutor(max_workers=len(pieces)) as pool:

        def call():
            for future in [pool.submit(k.run, piece) for piece in pieces]:
                future.result()

        _time_kernel(call, repeats, warmup, inner, timer, sample)
    return sample


def _time_kernel(call, repeats, warmup, inner, timer, sample):
    for _ in range(warmup):
        call()
    for _ in range(repeats):
        start = timer()
        for _ in range(inner):
            call()
        sample.times.append((timer() - start) / inner)
