"""Peak FLOP/s of this CPU through numpy's BLAS: ``np.matmul(A, B, out=C)``, FLOPs = 2mnk.

BLAS runs a large matmul on several threads. `measure_matmul(..., threads=n)` limits
it to n threads while it runs (with threadpoolctl), so that a peak can be put next to
a bandwidth measured on the same number of threads; `blas_threads()` says how many
threads BLAS uses when nothing limits it.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np

from .analysis import TimedSample

__all__ = ["MatmulSample", "measure_matmul", "NUMPY_DTYPES", "blas_threads", "limit_blas_threads"]

NUMPY_DTYPES = {"fp64": np.float64, "fp32": np.float32}


@dataclass
class MatmulSample(TimedSample):
    """Timings of an [m, k] x [k, n] matmul in one dtype; `times` in seconds per call.

    `threads`: the BLAS threads it ran on (None: not recorded, as in files saved
    before the count was kept, when BLAS used all its threads).
    """

    dtype: str
    m: int
    k: int
    n: int
    times: list = field(default_factory=list)
    threads: int | None = None

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k

    @property
    def best(self) -> float:
        """FLOP/s at the fastest repeat."""
        return self.flops / self.best_time

    @property
    def median(self) -> float:
        return self.flops / self.median_time

    def to_dict(self) -> dict:
        return {
            "dtype": self.dtype,
            "m": self.m,
            "k": self.k,
            "n": self.n,
            "times": list(self.times),
            "threads": self.threads,
        }

    @classmethod
    def from_dict(cls, d: dict) -> MatmulSample:
        threads = d.get("threads")
        return cls(
            d["dtype"],
            int(d["m"]),
            int(d["k"]),
            int(d["n"]),
            [float(t) for t in d["times"]],
            None if threads is None else int(threads),
        )


def blas_threads() -> int:
    """Threads numpy's BLAS uses when nothing limits it (1 if threadpoolctl cannot tell)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency of roofline
        return 1
    counts = [
        int(info.get("num_threads") or 1)
        for info in threadpool_info()
        if info.get("user_api") == "blas"
    ]
    return max(counts, default=1)


def limit_blas_threads(threads: int | None):
    """A context manager that runs BLAS on at most `threads` threads (None: no limit)."""
    if threads is None:
        return contextlib.nullcontext()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a whole number, 1 or more, or None; got {threads!r}")
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads, user_api="blas")


def measure_matmul(
    n: int,
    dtype: str = "fp64",
    repeats: int = 5,
    warmup: int = 1,
    timer=time.perf_counter,
    sample: MatmulSample | None = None,
    threads: int | None = None,
) -> MatmulSample:
    """Time ``np.matmul(A, B, out=C)`` for square n x n matrices. `sample` is filled in place.

    `threads`: run BLAS on that many threads (None: as many as BLAS likes, recorded
    as `blas_threads()`).
    """
    if dtype not in NUMPY_DTYPES:
        raise ValueError(
            f"numpy matmul peaks are measured for {', '.join(NUMPY_DTYPES)}, not {dtype!r}"
        )
    if n < 1 or repeats < 1:
        raise ValueError("n and repeats must be at least 1")
    rng = np.random.default_rng(0)
    t = NUMPY_DTYPES[dtype]
    a = rng.standard_normal((n, n)).astype(t)
    b = rng.standard_normal((n, n)).astype(t)
    c = np.empty((n, n), dtype=t)
    # small matrices: several calls per timing so the clock's resolution does not matter
    inner = max(1, int(2e8 // (2 * n**3)))
    if sample is None:
        sample = MatmulSample(dtype, n, n, n)
    with limit_blas_threads(threads):
        sample.threads = blas_threads()
        for _ in range(warmup):
            np.matmul(a, b, out=c)
        for _ in range(repeats):
            start = timer()
            for _ in range(inner):
                np.matmul(a, b, out=c)
            sample.times.append((timer() - start) / inner)
    return sample


#: Matmul sizes for each mode: the first n tried, the largest, and the seconds one
#: (dtype, thread count) may spend. Tiny (tests) measures one size.
class MatmulPlan(TypedDict):
    """One mode's matmul ramp: first and largest n, and the time budget (s) per dtype and
    thread count."""

    n_min: int
    n_max: int
    budget_s: float


MATMUL_PLANS: dict[str, MatmulPlan] = {
    "full": {"n_min": 1024, "n_max": 8192, "budget_s": 6.0},
    # quick: 5 s lets a 2-core machine reach n = 4096 in fp32 on all threads, where its BLAS
    # peaks (1.5 s stopped at 2048: 0.74 of a direct best-shape matmul on a quiet machine)
    "quick": {"n_min": 512, "n_max": 4096, "budget_s": 5.0},
    # build (the book's build, a few seconds in all): four ramps (two dtypes, one thread and
    # all) of 0.4 s each; on a 2-core machine that stops at n = 1024
    "build": {"n_min": 256, "n_max": 2048, "budget_s": 0.4},
    "tiny": {"n_min": 64, "n_max": 64, "budget_s": 1.0},
}


def first_matmul_size(mode: str, threads: int) -> int:
    """The first n to time: larger when many threads share the matmul (each thread needs
    tiles of its own to reach its peak), never above the mode's largest n."""
    plan = MATMUL_PLANS[mode]
    n = plan["n_min"]
    while n < plan["n_max"] and n * n < 2**17 * max(1, threads):  # n^2 >= 131072 x threads
        n *= 2
    return n


def next_matmul_size(
    n: int, seconds_per_call: float, spent_s: float, budget_s: float, n_max: int, calls: int
) -> int | None:
    """The next n of the ramp (twice n), or None to stop: at `n_max`, or when `calls` timed
    calls of 2n (8 times the work of one call at n) would not fit in the budget left.

    A best-shape matmul peak needs n large enough for BLAS to reach its own peak on every
    thread; doubling until the time budget is spent finds it without knowing the machine."""
    if 2 * n > n_max:
        return None
    if spent_s + 8.0 * seconds_per_call * calls > budget_s:
        return None
    return 2 * n


def ramp_matmul(
    dtype: str,
    mode: str,
    threads: int | None,
    repeats: int,
    n_max: int | None = None,
    timer=time.perf_counter,
    samples: list | None = None,
) -> list:
    """Time square matmuls of growing n (`first_matmul_size`, then doubling while
    `next_matmul_size` allows) on `threads` BLAS threads; returns the MatmulSamples (also
    appended to `samples` as they start, so an interrupt keeps what was timed).
    `n_max` (from the memory available) caps the mode's largest n."""
    plan = MATMUL_PLANS[mode]
    count = threads if threads is not None else blas_threads()
    cap = min(plan["n_max"], n_max or plan["n_max"])
    n: int | None = min(first_matmul_size(mode, count), cap)
    out = [] if samples is None else samples
    done, spent = [], 0.0
    while n is not None:
        sample = MatmulSample(dtype, n, n, n)
        out.append(sample)
        done.append(sample)
        start = time.perf_counter()
        measure_matmul(n, dtype, repeats, timer=timer, sample=sample, threads=threads)
        spent += time.perf_counter() - start
        n = next_matmul_size(n, sample.best_time, spent, plan["budget_s"], cap, repeats + 1)
    return done
