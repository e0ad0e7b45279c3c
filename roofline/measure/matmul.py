"""Peak FLOP/s of this CPU through numpy's BLAS: ``np.matmul(A, B, out=C)``, FLOPs = 2mnk."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .analysis import TimedSample

__all__ = ["MatmulSample", "measure_matmul", "NUMPY_DTYPES"]

NUMPY_DTYPES = {"fp64": np.float64, "fp32": np.float32}


@dataclass
class MatmulSample(TimedSample):
    """Timings of an [m, k] x [k, n] matmul in one dtype; `times` in seconds per call."""

    dtype: str
    m: int
    k: int
    n: int
    times: list = field(default_factory=list)

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
        return {"dtype": self.dtype, "m": self.m, "k": self.k, "n": self.n, "times": list(self.times)}

    @classmethod
    def from_dict(cls, d: dict) -> "MatmulSample":
        return cls(d["dtype"], int(d["m"]), int(d["k"]), int(d["n"]), [float(t) for t in d["times"]])


def measure_matmul(n: int, dtype: str = "fp64", repeats: int = 5, warmup: int = 1,
                   timer=time.perf_counter, sample: MatmulSample | None = None) -> MatmulSample:
    """Time ``np.matmul(A, B, out=C)`` for square n x n matrices. `sample` is filled in place."""
    if dtype not in NUMPY_DTYPES:
        raise ValueError(f"numpy matmul peaks are measured for {', '.join(NUMPY_DTYPES)}, not {dtype!r}")
    if n < 1 or repeats < 1:
        raise ValueError("n and repeats must be at least 1")
    rng = np.random.default_rng(0)
    t = NUMPY_DTYPES[dtype]
    a = rng.standard_normal((n, n)).astype(t)
    b = rng.standard_normal((n, n)).astype(t)
    c = np.empty((n, n), dtype=t)
    # small matrices: several calls per timing so the clock's resolution does not matter
    inner = max(1, int(2e8 // (2 * n ** 3)))
    if sample is None:
        sample = MatmulSample(dtype, n, n, n)
    for _ in range(warmup):
        np.matmul(a, b, out=c)
    for _ in range(repeats):
        start = timer()
        for _ in range(inner):
            np.matmul(a, b, out=c)
        sample.times.append((timer() - start) / inner)
    return sample
