"""The chip type: peak FLOP/s per dtype, memory, and links, every figure with its source.

All values are SI base units: FLOP/s, bytes, bytes/s. Link bandwidths are stored
**one way, per link**; the vendor's bidirectional total is derived
(`Link.bidirectional_total_bytes_per_s`). Peak FLOP/s are stored **dense**; the
vendor's 2:4-sparse figure, where one is quoted, is kept apart and is never
returned unless asked for with `sparse=True`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .dtypes import MATH_DTYPE, canonical_dtype

__all__ = ["Source", "Peak", "Link", "Chip", "UNITS"]

#: Execution units a peak can belong to.
UNITS = ("matrix", "vector")


@dataclass(frozen=True)
class Source:
    """Where a figure comes from: a URL, what that source prints, and how the stored figure
    follows from it.

    `says` holds the source's own words (its label and number as printed, nothing added).
    `derivation` is empty when the stored figure is the printed one; otherwise it says how the
    catalog computed it (a per-GPU figure from a system total, a dense figure as half the
    printed 2:4-sparse one, a one-way figure from a bidirectional total, an estimate scaled
    from another chip). `secondary` marks a figure that is not the vendor's own (a textbook's
    or a third party's estimate): pages that show it say so. `verified` is False for a
    placeholder nobody has checked against the source; the catalog ships none.
    """

    url: str
    says: str
    derivation: str = ""
    secondary: bool = False
    verified: bool = True

    @property
    def derived(self) -> bool:
        """True when the stored figure is computed from the printed one (see `derivation`)."""
        return bool(self.derivation)


@dataclass(frozen=True)
class Peak:
    """Peak FLOP/s for one dtype on one chip (matrix units where the chip has them).

    `accumulate` is the accumulator precision the figure assumes: consumer GeForce
    cards run fp16 with fp16 accumulate at twice the fp32-accumulate rate, and a
    training-style bf16/fp16 matmul gets the fp32-accumulate rate. Left empty it is
    "int32" for integer dtypes (int8 and int4 products are summed in int32) and "fp32"
    for floating-point ones.
    """

    dtype: str
    dense_flops_per_s: float
    source: Source
    sparse_flops_per_s: float | None = None
    accumulate: str = ""
    unit: str = "matrix"
    """The execution unit the figure belongs to: "matrix" (tensor cores, the TPU's MXU, AMD's
    matrix cores: matmuls and convolutions only) or "vector" (CUDA cores, a TPU's VPU: dot
    products, elementwise operations, reductions)."""

    def __post_init__(self):
        object.__setattr__(self, "dtype", canonical_dtype(self.dtype))
        if not self.accumulate:
            integer = self.dtype.startswith("int")
            object.__setattr__(self, "accumulate", "int32" if integer else "fp32")
        if self.unit not in UNITS:
            raise ValueError(
                f"peak {self.dtype}: unit must be one of {', '.join(UNITS)}, got {self.unit!r}"
            )
        _require_positive(f"peak {self.dtype} dense FLOP/s", self.dense_flops_per_s)
        if self.sparse_flops_per_s is not None:
            _require_positive(f"peak {self.dtype} sparse FLOP/s", self.sparse_flops_per_s)


@dataclass(frozen=True)
class Link:
    """A kind of link out of the chip: `count` links, each `one_way_bytes_per_s` per direction.

    Links are full duplex: a link moves `one_way_bytes_per_s` in each direction
    at once, so vendors quote twice that as "bidirectional" bandwidth.
    """

    name: str
    one_way_bytes_per_s: float
    source: Source
    count: int = 1
    topology: str | None = None
    """How the chips are joined: "torus" (TPU ICI: each chip links to its neighbours; a
    collective along one axis is a bidirectional ring where the axis wraps around, a line
    where it does not: see `wraparound_multiple`), "switch" (NVLink into NVSwitch, or a
    bridge joining two GPUs: all `count` links at once), "mesh" (a direct link to every
    other chip), "ring" (one closed loop, each chip linked to its two neighbours; a collective
    goes round it one way, as over PCIe between the cards of one host), or None (a host
    link, not for chip-to-chip collectives)."""
    wraparound_multiple: int | None = None
    """Torus only: an axis of n chips has a wraparound link (is a ring, not a line) only when
    n is a multiple of this: 16 on TPU v5e/v6e (only the full axis of 16 wraps), 4 on v4/v5p
    (slices built of whole 4x4x4 cubes). None: every axis wraps."""
    axis_chips: int | None = None
    """Torus only: the most chips on one axis (16 on a 16x16 v5e/v6e pod); a collective over
    more chips spans several axes (`roofline.multi_axis_collective_time`)."""
    domain_chips: int | None = None
    """The most chips this topology joins without another kind of network (8 GPUs on one
    NVSwitch board, 72 in a GB200 NVL72 rack, 2 over an NVLink bridge, 256 in a v5e pod)."""
    slice_chips: int | None = None
    """The most chips one slice (one job on this interconnect) may span, where that is fewer
    than `domain_chips`: a TPU v5p pod joins 8960 chips, one job at most 6144; a larger job
    runs as several slices over the data-centre network. None: `domain_chips`."""
    vendor: Source | None = None
    """The vendor's own words, where `source` (the figure the book uses) is another text."""
    vendor_one_way_bytes_per_s: float | None = None
    """The one-way per-link figure the vendor's text gives (derived from it where the vendor
    quotes a bidirectional per-chip total), when it differs from `one_way_bytes_per_s`."""

    def __post_init__(self):
        _require_positive(f"{self.name} one-way bandwidth", self.one_way_bytes_per_s)
        if not isinstance(self.count, int) or self.count < 1:
            raise ValueError(f"{self.name}: count must be a positive whole number of links")
        if self.topology not in (None, "torus", "switch", "mesh", "ring"):
            raise ValueError(
                f"{self.name}: topology must be 'torus', 'switch', 'mesh', 'ring' "
                f"or None, got {self.topology!r}"
            )
        if self.vendor_one_way_bytes_per_s is not None:
            _require_positive(
                f"{self.name} vendor one-way bandwidth", self.vendor_one_way_bytes_per_s
            )

    @property
    def bidirectional_bytes_per_s(self) -> float:
        """Both directions of one link added up, as spec sheets often quote it."""
        return 2 * self.one_way_bytes_per_s

    @property
    def one_way_total_bytes_per_s(self) -> float:
        """All `count` links together, one direction."""
        return self.count * self.one_way_bytes_per_s

    @property
    def bidirectional_total_bytes_per_s(self) -> float:
        """All links, both directions: the per-chip figure on most spec sheets."""
        return 2 * self.count * self.one_way_bytes_per_s


def _require_positive(what: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a number in SI base units, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a positive, finite number, got {value!r}")


@dataclass(frozen=True)
class Chip:
    """One accelerator (or a measured CPU). Define your own with the same fields.

    Example::

        Chip(name="My GPU", vendor="me",
             peaks=(Peak("bf16", 100e12, Source("my notes", "100 TFLOP/s dense")),),
             hbm_bytes=24e9, hbm_bytes_per_s=1e12,
             memory_source=Source("my notes", "24 GB at 1 TB/s"))
    """

    name: str
    vendor: str
    peaks: tuple[Peak, ...]
    hbm_bytes: float
    hbm_bytes_per_s: float
    memory_source: Source
    memory_kind: str = "HBM"
    interconnect: Link | None = None
    host_link: Link | None = None
    network: Link | None = None
    """The data-centre network beyond the chip's NVLink/ICI domain, as one chip's share, one
    way: an InfiniBand/RoCE NIC per GPU (400 Gb/s ConnectX-7 per H100 in a DGX H100), or a TPU
    host's DCN bandwidth divided by the chips on the host. The NVLink/ICI domain it joins is
    `interconnect.domain_chips` (see `roofline.collectives.hierarchical_all_reduce_time`)."""
    aliases: tuple[str, ...] = ()
    device_names: tuple[str, ...] = ()
    """The names the frameworks report for this chip, exactly as printed:
    ``torch.cuda.get_device_name()`` ("NVIDIA H100 80GB HBM3", "AMD Instinct MI300X") and JAX's
    ``device.device_kind`` ("TPU v5 lite"). `roofline.catalog.chip_for_device` matches a
    measured device by them (ignoring case, spaces and dashes); list only names whose device
    has this entry's figures (not the A100 80GB PCIe under the A100 SXM entry)."""
    notes: str = ""
    extra_memories: tuple[tuple[str, float], ...] = field(default=())
    """Other memory levels as (name, bytes/s), e.g. a measured L2 cache."""
    explorers: tuple[str, ...] = field(default=(), compare=False)
    """The book's explorers that offer this chip as a choice: "serving"
    (`roofline.serving_explorer`), "step" (`roofline.step_explorer`). Each choice is a figure
    the reader sees; the web pages precompute every combination they offer."""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError("a chip needs a non-empty name")
        if not self.peaks:
            raise ValueError(f"{self.name}: give at least one Peak (dtype and FLOP/s)")
        _require_positive(f"{self.name} memory capacity (bytes)", self.hbm_bytes)
        _require_positive(f"{self.name} memory bandwidth (bytes/s)", self.hbm_bytes_per_s)
        seen = set()
        for peak in self.peaks:
            key = (peak.dtype, peak.accumulate, peak.unit)
            if key in seen:
                raise ValueError(
                    f"{self.name}: two {peak.unit} peaks for {peak.dtype} "
                    f"({peak.accumulate} accumulate)"
                )
            seen.add(key)
        object.__setattr__(self, "peaks", tuple(self.peaks))
        if isinstance(self.device_names, str) or not all(
            isinstance(n, str) and n.strip() for n in self.device_names
        ):
            raise TypeError(
                f"{self.name}: device_names must be a tuple of names such as "
                f"('NVIDIA H100 80GB HBM3',), got {self.device_names!r}"
            )
        object.__setattr__(self, "device_names", tuple(self.device_names))

    # -- compute
    @property
    def dtypes(self) -> tuple[str, ...]:
        """The dtypes this chip has a peak figure for."""
        out = []
        for peak in self.peaks:
            if peak.dtype not in out:
                out.append(peak.dtype)
        return tuple(out)

    @property
    def main_dtype(self) -> str:
        """The dtype the book compares chips in: bf16, or fp16 where a chip has no bf16 (T4)."""
        for dtype in ("bf16", "fp16"):
            if dtype in self.dtypes:
                return dtype
        return self.dtypes[0]

    def has_peak(self, dtype="bf16", unit: str | None = None) -> bool:
        """True if the catalog holds a figure for `dtype` (on `unit`, if given)."""
        name = canonical_dtype(dtype)
        return any(p.dtype == name and (unit is None or p.unit == unit) for p in self.peaks)

    def peak(self, dtype="bf16", accumulate: str | None = None, unit: str | None = None) -> Peak:
        """The `Peak` record (figures and source) for `dtype`.

        `unit`: "matrix" or "vector"; None takes the matrix figure where there is one (what a
        matmul gets), else the only one there is (e.g. NVIDIA's fp32, a CUDA-core figure).
        """
        name = canonical_dtype(dtype)
        matches = [p for p in self.peaks if p.dtype == name]
        if not matches and name in MATH_DTYPE:  # NVFP4/MXFP4 run at the fp4 rate
            name = MATH_DTYPE[name]
            matches = [p for p in self.peaks if p.dtype == name]
        if not matches:
            raise ValueError(f"{self.name} has no {name} figure; it has {', '.join(self.dtypes)}")
        if unit is not None:
            if unit not in UNITS:
                raise ValueError(f"unit must be one of {', '.join(UNITS)}, got {unit!r}")
            on_unit = [p for p in matches if p.unit == unit]
            if not on_unit:
                have = sorted({p.unit for p in matches})
                raise ValueError(
                    f"{self.name} has no {unit} {name} figure; it has {' and '.join(have)} only"
                )
            matches = on_unit
        elif any(p.unit == "matrix" for p in matches):
            matches = [p for p in matches if p.unit == "matrix"]
        if accumulate is None:
            # the fp32-accumulate rate is what a training-style matmul gets
            preferred = [p for p in matches if p.accumulate == "fp32"]
            return (preferred or matches)[0]
        acc = canonical_dtype(accumulate)
        for p in matches:
            if p.accumulate == acc:
                return p
        accumulators = ", ".join(p.accumulate for p in matches)
        raise ValueError(
            f"{self.name} has no {name} figure with {acc} accumulate; it has {accumulators} "
            "accumulate"
        )

    def peak_flops_per_s(
        self,
        dtype="bf16",
        sparse: bool = False,
        accumulate: str | None = None,
        unit: str | None = None,
    ) -> float:
        """Peak FLOP/s for `dtype`: dense unless `sparse=True` (2:4 structured sparsity);
        on the matrix units unless `unit="vector"` (see `peak`)."""
        if not isinstance(sparse, bool):
            raise TypeError("sparse must be True or False")
        peak = self.peak(dtype, accumulate, unit)
        if not sparse:
            return peak.dense_flops_per_s
        if peak.sparse_flops_per_s is None:
            with_sparse = [p.dtype for p in self.peaks if p.sparse_flops_per_s is not None]
            have = (
                f"sparse figures exist for {', '.join(with_sparse)}"
                if with_sparse
                else "the vendor quotes no sparse figures for this chip"
            )
            raise ValueError(f"{self.name} has no sparse {peak.dtype} figure; {have}")
        return peak.sparse_flops_per_s

    # -- links
    @property
    def link_bytes_per_s(self) -> float | None:
        """Chip-to-chip bandwidth of one link, one way (None if the chip has none)."""
        return None if self.interconnect is None else self.interconnect.one_way_bytes_per_s

    @property
    def link_count(self) -> int | None:
        return None if self.interconnect is None else self.interconnect.count

    @property
    def network_bytes_per_s(self) -> float | None:
        """Data-centre network bandwidth per chip, one way (None if the catalog has none)."""
        return None if self.network is None else self.network.one_way_bytes_per_s

    @property
    def host_bytes_per_s(self) -> float | None:
        """Host link (PCIe) bandwidth, one way (None if not quoted)."""
        return None if self.host_link is None else self.host_link.one_way_bytes_per_s

    def memory_levels(self) -> dict[str, float]:
        """Every bandwidth a roofline can draw for this chip, name -> bytes/s, fastest first.

        The chip-to-chip link is what one transfer to one other chip gets, one way: through a
        switch (NVLink into NVSwitch) all `count` links at once, the per-GPU NVLink bandwidth;
        on a torus or a mesh (TPU ICI, AMD Infinity Fabric) one link, the one to that neighbour.
        """
        levels = {f"{self.memory_kind}": self.hbm_bytes_per_s}
        for name, bw in self.extra_memories:
            levels[name] = bw
        link = self.interconnect
        if link is not None and link.topology == "switch":
            levels[f"{link.name} (all {link.count} links, one way)"] = (
                link.one_way_total_bytes_per_s
            )
        elif link is not None:
            levels[f"{link.name} (1 link, one way)"] = link.one_way_bytes_per_s
        if self.host_link is not None:
            levels[f"{self.host_link.name} (one way)"] = self.host_link.one_way_bytes_per_s
        return dict(sorted(levels.items(), key=lambda kv: -kv[1]))

    def __str__(self) -> str:
        return self.name

    # -- display in a notebook (roofline.display): a short summary instead of every field
    def summary(self):
        """The chip's main figures with units, as a `roofline.display.Summary`."""
        from .display import Summary
        from .units import format_bandwidth, format_bytes, format_flops_rate, format_intensity

        rows = [("vendor", self.vendor)]
        for p in self.peaks:
            usual = "int32" if p.dtype.startswith("int") else "fp32"
            said = ([] if p.accumulate == usual else [f"{p.accumulate} acc."]) + (
                ["vector units"] if p.unit == "vector" else []
            )
            if p.source.secondary:
                said.append("secondary estimate")
            label = f"{p.dtype} peak" + (f" ({', '.join(said)})" if said else "")
            text = f"{format_flops_rate(p.dense_flops_per_s)} dense"
            if p.sparse_flops_per_s is not None:
                text += f", {format_flops_rate(p.sparse_flops_per_s)} 2:4 sparse"
            rows.append((label, text))
        rows.append(
            (
                f"{self.memory_kind} memory",
                f"{format_bytes(self.hbm_bytes)} at {format_bandwidth(self.hbm_bytes_per_s)}",
            )
        )
        main = self.peak(self.main_dtype)
        rows.append(
            (
                f"ridge point ({main.dtype})",
                format_intensity(main.dense_flops_per_s / self.hbm_bytes_per_s),
            )
        )
        for link, what in ((self.interconnect, "chip-to-chip"), (self.host_link, "host link")):
            if link is not None:
                kind = f" ({link.topology})" if link.topology else ""
                rows.append(
                    (
                        what,
                        f"{link.count} x {link.name}{kind}, "
                        f"{format_bandwidth(link.one_way_bytes_per_s)} one way per link",
                    )
                )
        for name, bw in self.extra_memories:
            rows.append((name, format_bandwidth(bw)))
        return Summary(f"Chip {self.name}", rows)

    def __repr__(self) -> str:
        return self.summary().text()

    def _repr_html_(self) -> str:
        return self.summary().html()
