"""The measured operations: what is timed (`_operation_plan`: a matmul, a dot product, an
elementwise op, ... sized by the settings), how (`_time_calls`: repeats of a few calls each,
the best kept) and one timed operation's sample (`OperationSample`).

Part of `roofline.measure` (the run is in `runner`, which re-exports these names).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..costs import Cost, dot, elementwise, matmul
from .analysis import TimedSample


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
