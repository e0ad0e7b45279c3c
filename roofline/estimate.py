"""Time estimates on the roofline, ridge points and critical batch sizes."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from .catalog import get_chip
from .costs import Cost, ShardedMatmul, sharded_matmul
from .dtypes import bytes_per_element, canonical_dtype
from .validate import check_size, is_symbolic

__all__ = [
    "Estimate", "estimate", "critical_intensity", "critical_batch_size",
    "exact_critical_batch_size", "attainable_flops_per_s", "sharded_estimate",
    "sharded_critical_D", "check_below_roof",
]


def _bandwidth(chip, bandwidth_bytes_per_s):
    if bandwidth_bytes_per_s is None:
        return chip.hbm_bytes_per_s
    check_size("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    return bandwidth_bytes_per_s


def critical_intensity(chip, dtype="bf16", sparse=False, bandwidth_bytes_per_s=None,
                       accumulate=None):
    """The ridge point in FLOPs/byte: peak FLOP/s divided by memory bandwidth (bytes/s).

    An operation whose intensity is above it is compute-bound on this chip, below it
    bandwidth-bound. Pass `bandwidth_bytes_per_s` for another memory level or link,
    and `accumulate="fp16"` for a consumer card's fp16-accumulate rate.
    """
    chip = get_chip(chip)
    peak = chip.peak_flops_per_s(dtype, sparse=sparse, accumulate=accumulate)
    return peak / _bandwidth(chip, bandwidth_bytes_per_s)


def attainable_flops_per_s(intensity, chip, dtype="bf16", sparse=False, bandwidth_bytes_per_s=None):
    """The roofline itself: min(peak FLOP/s, bandwidth x intensity)."""
    chip = get_chip(chip)
    check_size("intensity", intensity)
    peak = chip.peak_flops_per_s(dtype, sparse=sparse)
    slope = _bandwidth(chip, bandwidth_bytes_per_s) * intensity
    if is_symbolic(intensity):
        import sympy
        return sympy.Min(peak, slope)
    np = sys.modules.get("numpy")
    if np is not None and isinstance(slope, np.ndarray):
        return np.minimum(peak, slope)
    return min(peak, slope)


@dataclass(frozen=True)
class Estimate:
    """Roofline time bounds for one operation on one chip, in seconds."""

    cost: Cost
    chip_name: str
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float
    t_math: object
    t_comms: object

    @property
    def t_lower(self):
        """Perfect overlap of math and data movement: max(t_math, t_comms)."""
        return _max(self.t_math, self.t_comms)

    @property
    def t_upper(self):
        """No overlap at all: t_math + t_comms (at most twice t_lower)."""
        return self.t_math + self.t_comms

    @property
    def bound(self):
        """"compute" when the math takes at least as long as moving the bytes, else "bandwidth"."""
        if is_symbolic(self.t_math) or is_symbolic(self.t_comms):
            raise TypeError("the bound of a symbolic estimate depends on the symbols' values; "
                            "substitute numbers first")
        np = sys.modules.get("numpy")
        if np is not None and (isinstance(self.t_math, np.ndarray) or isinstance(self.t_comms, np.ndarray)):
            return np.where(np.asarray(self.t_math) >= np.asarray(self.t_comms), "compute", "bandwidth")
        return "compute" if self.t_math >= self.t_comms else "bandwidth"

    @property
    def achieved_flops_per_s(self):
        """FLOP/s at the lower-bound time: the operation's point on the roofline."""
        return self.cost.flops / self.t_lower

    def __str__(self) -> str:
        from .units import format_time
        try:
            return (f"{self.cost.name} on {self.chip_name}: math {format_time(self.t_math)}, "
                    f"memory {format_time(self.t_comms)}, between {format_time(self.t_lower)} "
                    f"and {format_time(self.t_upper)}, {self.bound}-bound")
        except TypeError:
            return repr(self)


def _max(a, b):
    if is_symbolic(a) or is_symbolic(b):
        import sympy
        return sympy.Max(a, b)
    np = sys.modules.get("numpy")
    if np is not None and (isinstance(a, np.ndarray) or isinstance(b, np.ndarray)):
        return np.maximum(a, b)
    return max(a, b)


def estimate(cost: Cost, chip, dtype=None, sparse=False, bandwidth_bytes_per_s=None) -> Estimate:
    """Time bounds for `cost` on `chip`: t_math = FLOPs / peak, t_comms = bytes / bandwidth.

    `dtype` picks the peak (defaults to the dtype the cost's math runs in); the
    dense peak is used unless `sparse=True`. `bandwidth_bytes_per_s` replaces the
    chip's memory bandwidth (for another memory level or a link).
    """
    if not isinstance(cost, Cost):
        raise TypeError(f"estimate needs a Cost from roofline.matmul, dot, ... got {cost!r}")
    chip = get_chip(chip)
    dtype = canonical_dtype(dtype if dtype is not None else cost.dtype)
    peak = chip.peak_flops_per_s(dtype, sparse=sparse)
    bandwidth = _bandwidth(chip, bandwidth_bytes_per_s)
    return Estimate(cost, chip.name, peak, bandwidth, cost.flops / peak, cost.bytes / bandwidth)


def critical_batch_size(chip, dtype="bf16", weights=None, sparse=False, accumulate=None):
    """The batch above which a matmul is compute-bound, assuming B << D, F.

    Then bytes ~ (bytes per weight) * D * F and intensity ~ 2B / (bytes per weight),
    so B_crit = ridge point * (bytes per weight) / 2. With bf16 weights this is the
    ridge point itself (240 on TPU v5e); int8 weights with bf16 math halve it.
    """
    w = bytes_per_element(weights if weights is not None else dtype)
    return critical_intensity(chip, dtype, sparse=sparse, accumulate=accumulate) * w / 2


def exact_critical_batch_size(chip, D, F, dtype="bf16", activations=None, weights=None,
                              output=None, sparse=False, accumulate=None):
    """The exact batch where t_math = t_comms for X[B, D] @ W[D, F], without B << D, F.

    Solves 2BDF / peak = (a*B*D + w*D*F + o*B*F) / bandwidth for B:
        B = ridge * w * D * F / (2*D*F - ridge * (a*D + o*F)).
    Returns infinity when the denominator is not positive: then the matmul is
    bandwidth-bound at every batch size.
    """
    check_size("D", D)
    check_size("F", F)
    ridge = critical_intensity(chip, dtype, sparse=sparse, accumulate=accumulate)
    a = bytes_per_element(activations if activations is not None else dtype)
    w = bytes_per_element(weights if weights is not None else dtype)
    o = bytes_per_element(output if output is not None else dtype)
    denominator = 2 * D * F - ridge * (a * D + o * F)
    numerator = ridge * w * D * F
    if is_symbolic(denominator):
        return numerator / denominator
    np = sys.modules.get("numpy")
    if np is not None and isinstance(denominator, np.ndarray):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.inf)
    return numerator / denominator if denominator > 0 else float("inf")


def _link(chip, link_bytes_per_s):
    if link_bytes_per_s is not None:
        check_size("link_bytes_per_s", link_bytes_per_s)
        return link_bytes_per_s
    if chip.link_bytes_per_s is None:
        raise ValueError(f"{chip.name} has no chip-to-chip link in the catalog; "
                         "pass link_bytes_per_s (one way, per link)")
    return chip.link_bytes_per_s


def sharded_estimate(B, D, F, chip, n=2, dtype="bf16", link_bytes_per_s=None) -> Estimate:
    """Time on each chip for a matmul with D split over n chips, counting only the link.

    t_math = (2BDF/n) / peak; t_comms = bytes each chip sends one way / one-way link
    bandwidth. Memory traffic inside each chip is left out, as in the two-chip example.
    """
    chip = get_chip(chip)
    plan: ShardedMatmul = sharded_matmul(B, D, F, n=n, dtype=dtype)
    link = _link(chip, link_bytes_per_s)
    cost = Cost(plan.per_chip.name, plan.per_chip.flops, plan.send_bytes_per_direction, plan.per_chip.dtype)
    return estimate(cost, chip, dtype=dtype, bandwidth_bytes_per_s=link)


def sharded_critical_D(chip, n=2, dtype="bf16", link_bytes_per_s=None):
    """The contraction size D above which the n-chip sharded matmul is compute-bound.

    2BDF/(n * peak) > 2(n-1)/n * (bytes per element) * BF / link; B and F cancel:
    D > (n - 1) * (bytes per element) * peak / link. For n = 2 in bf16: D > 2 * peak / link.
    """
    chip = get_chip(chip)
    check_size("n", n)
    link = _link(chip, link_bytes_per_s)
    return (n - 1) * bytes_per_element(dtype) * chip.peak_flops_per_s(dtype) / link


def check_below_roof(flops_per_s, intensity, chip, dtype="bf16", bandwidth_bytes_per_s=None,
                     tolerance=1.02):
    """Raise ValueError if a (intensity, FLOP/s) point lies above the roofline.

    A point above the roof cannot be real: it means a units, sparsity or counting
    error (a sparse peak used as dense, bytes counted in GB, FLOPs counted once per
    multiply-add). `tolerance` allows for rounding in spec figures.
    """
    roof = attainable_flops_per_s(intensity, chip, dtype, bandwidth_bytes_per_s=bandwidth_bytes_per_s)
    if flops_per_s > roof * tolerance:
        from .units import format_flops_rate
        raise ValueError(
            f"{format_flops_rate(flops_per_s)} at intensity {intensity:.3g} FLOPs/B is above the "
            f"roofline ({format_flops_rate(roof)}) of {get_chip(chip).name}: check units "
            "(GB vs bytes), sparse vs dense peaks, and whether a multiply-add counts as 2 FLOPs"
        )
    return roof
