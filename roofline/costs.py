"""Cost models: how many FLOPs an operation does and how many bytes it moves.

Each function is written once and works on plain numbers, numpy arrays and sympy
symbols alike, so the book derives formulas and evaluates them with the same code::

    >>> import sympy
    >>> B, D, F = sympy.symbols("B D F", positive=True)
    >>> matmul(B, D, F).flops
    2*B*D*F

Bytes count each operand read from memory once and the result written once
(the minimum traffic, as if the operation were perfectly fused and cached).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .dtypes import bytes_per_element, canonical_dtype
from .validate import check_size

__all__ = [
    "Cost",
    "dot",
    "elementwise",
    "matmul",
    "matmul_exact_flops",
    "per_example_matmul",
    "tiled_matmul",
    "sharded_matmul",
    "ShardedMatmul",
]


@dataclass(frozen=True)
class Cost:
    """FLOPs done and bytes moved by one operation, the dtype its math runs in, and the
    execution unit it runs on: "matrix" (matmuls: tensor cores, MXU), "vector" (dot products,
    elementwise ops, reductions: CUDA cores, VPU) or None (not said: the chip's main peak).
    `accumulate` is the precision the running sums are kept in inside the unit (e.g. "fp32"
    for a bf16 matmul); it picks the peak figure and never adds bytes. None: the chip's
    default (fp32 accumulate where a sheet quotes several)."""

    name: str
    flops: Any  # number, numpy array or sympy expression
    bytes: Any  # number, numpy array or sympy expression
    dtype: str = "bf16"
    unit: str | None = None
    accumulate: str | None = None

    @property
    def intensity(self):
        """Arithmetic intensity in FLOPs per byte."""
        return self.flops / self.bytes

    def summary(self):
        """FLOPs, bytes and intensity with units, as a `roofline.display.Summary`."""
        from .display import Summary, quantity
        from .units import format_bytes, format_flops, format_intensity

        try:
            intensity = quantity(self.intensity, format_intensity)
        except Exception:  # e.g. bytes of 0 in an array: show the rest anyway
            intensity = "(undefined)"
        on = "" if self.unit is None else f" on the {self.unit} units"
        acc = "" if self.accumulate is None else f", {self.accumulate} accumulate"
        return Summary(
            f"Cost of {self.name} ({self.dtype} math{acc}{on})",
            [
                ("FLOPs", quantity(self.flops, format_flops)),
                ("bytes moved", quantity(self.bytes, format_bytes)),
                ("intensity", intensity),
            ],
        )

    def __repr__(self) -> str:
        return self.summary().text()

    def _repr_html_(self) -> str:
        return self.summary().html()


def dot(N, dtype="bf16") -> Cost:
    """Dot product of two length-N vectors: N multiplies and N - 1 adds (~2N FLOPs).

    Reads 2N elements and writes one: bytes = (2N + 1) * bytes per element.
    The intensity tends to 1/2 FLOP per byte in bf16: memory-bound on every chip.
    """
    check_size("N", N)
    size = bytes_per_element(dtype)
    return Cost("dot", 2 * N - 1, (2 * N + 1) * size, canonical_dtype(dtype), "vector")


def elementwise(
    N, dtype="bf16", flops_per_element=1, inputs=2, outputs=1, name="elementwise"
) -> Cost:
    """An elementwise op on N elements (default: z = x + y, 1 FLOP, 2 reads, 1 write).

    It runs on the vector units. FLOP convention: a vendor's vector peak counts a fused
    multiply-add as 2 FLOPs, so an op made only of adds or maxes (1 FLOP per instruction)
    reaches at most half of that peak. Transcendentals (exp, tanh, ...) run on separate
    special-function units at a lower rate; counting each as one FLOP makes the time too low.
    """
    check_size("N", N)
    check_size("flops_per_element", flops_per_element)
    check_size("inputs", inputs)
    check_size("outputs", outputs)
    size = bytes_per_element(dtype)
    return Cost(
        name, flops_per_element * N, (inputs + outputs) * N * size, canonical_dtype(dtype), "vector"
    )


def _operand_bytes(dtype, activations, weights, output):
    a = bytes_per_element(activations if activations is not None else dtype)
    w = bytes_per_element(weights if weights is not None else dtype)
    o = bytes_per_element(output if output is not None else dtype)
    return a, w, o


def matmul(
    B, D, F, dtype="bf16", activations=None, weights=None, output=None, accumulate=None
) -> Cost:
    """Activations X[B, D] times weights W[D, F] gives Y[B, F].

    FLOPs: 2BDF (B*F outputs, each D multiplies and D - 1 adds, rounded up to 2D;
    `matmul_exact_flops` gives BF(2D - 1)). Bytes: read X and W, write Y, each in its
    own dtype (`activations`, `weights`, `output`; all default to `dtype`, which is
    also the dtype the math runs in, e.g. bf16 activations times int8 weights is
    `matmul(B, D, F, dtype="bf16", weights="int8")`).
    `accumulate` is the precision of the running sums inside the matrix unit ("fp32" for a
    bf16 matmul that writes Y back in bf16): it picks the peak `estimate` uses and adds no
    bytes, because the accumulator never leaves the chip; only `output` sets Y's bytes.
    """
    for name, value in (("B", B), ("D", D), ("F", F)):
        check_size(name, value)
    a, w, o = _operand_bytes(dtype, activations, weights, output)
    acc = None if accumulate is None else canonical_dtype(accumulate)
    return Cost(
        "matmul",
        2 * B * D * F,
        a * B * D + w * D * F + o * B * F,
        canonical_dtype(dtype),
        "matrix",
        acc,
    )


def matmul_exact_flops(B, D, F):
    """The exact operation count of a matmul: B*F*D multiplies plus B*F*(D - 1) adds."""
    for name, value in (("B", B), ("D", D), ("F", F)):
        check_size(name, value)
    return B * F * (2 * D - 1)


def per_example_matmul(B, D, F, dtype="bf16", activations=None, weights=None, output=None) -> Cost:
    """X[B, D] times per-example weights W[B, D, F]: every example has its own matrix.

    FLOPs 2BDF as for a shared matmul, but the weights are B times larger
    (B*D*F elements), so the intensity stays below about 2/(bytes per weight)
    FLOPs per byte whatever B is: always memory-bound.
    """
    for name, value in (("B", B), ("D", D), ("F", F)):
        check_size(name, value)
    a, w, o = _operand_bytes(dtype, activations, weights, output)
    return Cost(
        "per-example matmul",
        2 * B * D * F,
        a * B * D + w * B * D * F + o * B * F,
        canonical_dtype(dtype),
        "matrix",
    )


def tiled_matmul(bm, bk, bn, dtype="bf16") -> Cost:
    """One tile step of a blocked matmul: an [bm, bk] tile times a [bk, bn] tile.

    The step loads both input tiles from slow memory (bm*bk + bk*bn elements) and
    accumulates into an output tile that stays in fast memory, doing 2*bm*bk*bn FLOPs.
    Its intensity, 2*bm*bn / (bm + bn) / bytes per element, does not depend on bk:
    larger output tiles, not deeper ones, raise it.
    """
    for name, value in (("bm", bm), ("bk", bk), ("bn", bn)):
        check_size(name, value)
    size = bytes_per_element(dtype)
    return Cost(
        "tiled matmul step",
        2 * bm * bk * bn,
        (bm * bk + bk * bn) * size,
        canonical_dtype(dtype),
        "matrix",
    )


@dataclass(frozen=True)
class ShardedMatmul:
    """A matmul split over n chips along the contraction dimension D.

    Each chip holds X[:, D/n] and W[D/n, :], computes a partial Y[B, F] and the n
    partial sums are added with an all-reduce. Counts are **per chip**.
    """

    n: object
    per_chip: Cost
    """FLOPs each chip does (2BDF/n) and the bytes it reads from and writes to its own memory
    (its X and W shards and its partial sum)."""
    send_bytes_per_direction: object
    """Bytes each chip sends over its one link in one direction for a **one-way ring**
    all-reduce: 2(n-1)/n partial sums. For n = 2 that is one whole partial sum (2BF bytes in
    bf16); links are full duplex, so the partial sum coming back costs no extra time. Other
    topologies: `roofline.collective_bytes_per_link("all-reduce", partial_sum_bytes, n, ...)`."""
    partial_sum_bytes: object = None
    """Bytes of one partial sum Y[B, F]: the array the all-reduce adds up (V)."""

    @property
    def total_flops(self):
        """All chips together: the same 2BDF as on one chip."""
        return self.n * self.per_chip.flops

    def summary(self):
        """Per-chip FLOPs, memory bytes and link bytes with units (a `roofline.display.Summary`)."""
        from .display import Summary, quantity
        from .units import format_bytes, format_flops

        rows = [
            ("FLOPs", quantity(self.per_chip.flops, format_flops)),
            ("memory bytes", quantity(self.per_chip.bytes, format_bytes)),
        ]
        if self.partial_sum_bytes is not None:
            rows.append(
                ("partial sum (all-reduced)", quantity(self.partial_sum_bytes, format_bytes))
            )
        rows += [
            (
                "sent per link, one way (ring)",
                quantity(self.send_bytes_per_direction, format_bytes),
            ),
            ("FLOPs, all chips", quantity(self.total_flops, format_flops)),
        ]
        return Summary(
            f"Matmul sharded over {self.n} chips ({self.per_chip.dtype}), per chip", rows
        )

    def __repr__(self) -> str:
        return self.summary().text()

    def _repr_html_(self) -> str:
        return self.summary().html()


def sharded_matmul(B, D, F, n=2, dtype="bf16") -> ShardedMatmul:
    """X[B, D] @ W[D, F] with D split over `n` chips ([X0, X1] @ [W0; W1] = X0 W0 + X1 W1)."""
    for name, value in (("B", B), ("D", D), ("F", F), ("n", n)):
        check_size(name, value)
    try:
        if n < 1:
            raise ValueError(f"n must be at least 1 chip, got {n!r}")
    except TypeError:  # symbolic n: cannot compare, accept it
        pass
    local = matmul(B, D / n, F, dtype=dtype)
    partial_sum_bytes = B * F * bytes_per_element(dtype)
    send = 2 * (n - 1) * partial_sum_bytes / n
    return ShardedMatmul(
        n,
        Cost(f"matmul on 1 of {n} chips", local.flops, local.bytes, local.dtype, "matrix"),
        send,
        partial_sum_bytes,
    )
