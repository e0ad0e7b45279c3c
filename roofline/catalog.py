"""The hardware catalog: every chip the book uses, every figure with its source.

Conventions (see `hardware.py`): FLOP/s are dense, with the vendor's 2:4-sparse
figure kept apart; links are one way, per link; everything in SI base units.
Where a vendor quotes only a "with sparsity" number, the dense figure stored is
half of it, as the vendor's own footnote says ("Specifications 1/2 lower without
sparsity"), and the source text says so.
"""

from __future__ import annotations

import contextvars
import difflib
import re

from .hardware import Chip, Link, Peak, Source

__all__ = ["CATALOG", "chip_for_device", "get_chip", "list_chips", "register_chip"]

T = 1e12  # tera, for readability of the table below only
G = 1e9
GiB = 2**30

# -- sources ------------------------------------------------------------------
_V4 = "https://cloud.google.com/tpu/docs/v4"
_V5E = "https://cloud.google.com/tpu/docs/v5e"
_V5P = "https://cloud.google.com/tpu/docs/v5p"
_V6E = "https://cloud.google.com/tpu/docs/v6e"
_TPU7X = "https://cloud.google.com/tpu/docs/tpu7x"
_TPU7X_BLOG = "https://blog.google/products/google-cloud/ironwood-tpu-age-of-inference/"
_SCALING = "https://jax-ml.github.io/scaling-book/tpus/"
_SCALING_ROOFLINE = "https://jax-ml.github.io/scaling-book/roofline/"
_A100 = "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
_H100 = "https://www.nvidia.com/en-us/data-center/h100/"
_H200 = "https://www.nvidia.com/en-us/data-center/h200/"
_B200 = "https://www.nvidia.com/en-us/data-center/hgx/"
_GB200 = "https://www.nvidia.com/en-us/data-center/gb200-nvl72/"
_MI300X = "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html"
_MI325X = "https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html"
_MI355X = "https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html"
_GA102 = (
    "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"
)
_AMPERE = "https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf"
_HOPPER = "https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper"
_ADA = "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"
_RTX_BW = "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf"
_T4 = "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf"
_L4 = "https://www.nvidia.com/en-us/data-center/l4/"
_L40S = "https://www.nvidia.com/en-us/data-center/l40s/"
_TRN2 = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/arch/neuron-hardware/trainium2.html"
_TRN2_NKI = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/arch/trainium2_arch.html"
_PCIE = "https://pcisig.com/specifications"
#: The H100 PCIe card's own datasheet (the product page now describes the H100 NVL instead).
_H100_PCIE = "https://www.nvidia.com/content/dam/en-zz/Solutions/gtcs22/data-center/h100/PB-11133-001_v02.pdf"
_NVLINK4_PER_LINK = (
    "one way per link = 900 GB/s / 18 links / 2 directions = 25 GB/s (fourth-generation NVLink)"
)
_NVLINK5_PER_LINK = (
    "one way per link = 1.8 TB/s / 18 links / 2 directions = 50 GB/s (fifth-generation NVLink)"
)
_BLACKWELL_WHY = (
    "data-centre Blackwell, like Hopper, runs bf16 on its CUDA cores as packed pairs, twice the "
    "fp32 rate (H100 SXM5: 133.8 = 2 x 66.9 TFLOPS in the Hopper whitepaper; NVIDIA prints no "
    "bf16 non-Tensor figure for Blackwell, so this is an assumption)"
)


def _peak(
    dtype,
    dense,
    url,
    says,
    sparse=None,
    accumulate="",
    unit="matrix",
    derivation="",
    secondary=False,
):
    if not derivation:
        derivation = _derive(says, sparse)
    source = Source(url, says, derivation=derivation, secondary=secondary)
    return Peak(dtype, dense, source, sparse_flops_per_s=sparse, accumulate=accumulate, unit=unit)


def _derive(says, sparse):
    """How a figure follows from text that prints a system total or only a sparse figure."""
    steps = []
    if ", i.e. " in says:
        raise ValueError(f"keep the per-GPU arithmetic out of `says`: {says!r}")
    per_system = re.search(r"for (\d+) GPUs|\((\d+) GPUs\)", says)
    if per_system:
        count = per_system.group(1) or per_system.group(2)
        steps.append(f"per GPU = the system figure / {count}")
    if sparse is not None and _SPARSE_NOTE in says and "|" not in says:
        steps.append("dense = the printed sparse figure / 2 (the footnote)")
    return "; ".join(steps)


# -- vector units (dot products, elementwise ops, reductions) --------------------
#: The scaling book's one figure for a TPU's vector unit (VPU), a footnote on TPU v5p.
_VPU_V5P = 7e12
_VPU_SAYS = "The TPU v5p VPU can do roughly 7e12 FLOPs / second"


def _tpu_vpu(mxu_bf16):
    """A TPU's bf16 vector (VPU) peak: a secondary estimate, never a Google figure.

    Google publishes no VPU rate. The scaling book gives ~7e12 FLOP/s for v5p; other TPUs are
    scaled from it by their MXU peak (the v5p ratio, 7e12 : 459e12 ~ 1 : 66, assumed on every
    generation). The VPU computes in fp32, so bf16 elementwise math runs at this rate too.
    """
    if mxu_bf16 == 459 * T:
        return _peak("bf16", _VPU_V5P, _SCALING_ROOFLINE, _VPU_SAYS, unit="vector", secondary=True)
    return _peak(
        "bf16",
        _VPU_V5P * mxu_bf16 / (459 * T),
        _SCALING_ROOFLINE,
        _VPU_SAYS,
        unit="vector",
        secondary=True,
        derivation=f"scaled from v5p by the MXU peaks: 7e12 x {mxu_bf16 / T:g} / 459 TFLOP/s "
        "(assumes v5p's VPU-to-MXU ratio; a rough estimate)",
    )


def _bf16_vector_as_fp32(fp32, url, says, why, factor=1):
    """A bf16 vector peak taken as `factor` x the chip's fp32 vector (or FP32) rate, with the
    reason (1 where bf16 runs at the fp32 rate, 2 where the cores pack two bf16 per lane)."""
    rate = "the fp32 rate is used" if factor == 1 else f"{factor:g} x the fp32 figure is taken"
    return _peak(
        "bf16",
        factor * fp32,
        url,
        says,
        unit="vector",
        derivation=f"no bf16 vector figure is published; {rate}: {why}",
    )


def _pcie(gen: int, url: str = _PCIE, says: str | None = None) -> Link:
    """A x16 PCIe link, one way: 16 lanes x transfer rate x encoding efficiency / 8 bits."""
    gts = {3: 8, 4: 16, 5: 32}[gen]
    one_way = 16 * gts * 1e9 * (128 / 130) / 8
    text = says or f"PCIe Gen{gen}: {gts} GT/s per lane, 128b/130b encoding"
    derivation = (
        f"one way = 16 lanes x {gts} GT/s x 128/130 / 8 bits = {one_way / 1e9:.1f} GB/s "
        "(the PCIe rate after encoding; a sheet's figure adds both directions and rounds)"
    )
    return Link(f"PCIe Gen{gen} x16", one_way, Source(url, text, derivation=derivation))


# -- the data-centre network beyond one NVLink/ICI domain (one chip's share, one way) ------
_DGX_BASEPOD = (
    "https://docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-"
    "enterprise-ai/latest/core-components.html"
)
# One way: Google's v5e page gives "NIC configuration per host: 2 x 100 Gbps NIC" and "Data center
# network bandwidth per Pod: 6.4 Tbps" (32 hosts x 200 Gb/s = 2.5e10 B/s per host, each way on
# full-duplex NICs); the scaling book's training.md words the same 2.5e10 as "total DCN
# ingress+egress bandwidth ... per host", which would halve it: a reader should know both readings.
# Host = the physical host (v5e/v6e 4x2 = 8 chips; v4/v5p 2x2x1 = 4); Cloud TPU VMs of v5e may hold
# 1, 4 or 8 of a host's chips (ct5lp-hightpu-1t/-4t/-8t).
_SCALING_DCN = (
    "DCN bandwidth is typically around 2.5e10 bytes / second per host; host size {host} "
    "chips ({shape}); the book divides it by the chips on the host and takes it as one way"
)
_CX7 = (
    "Four OSFP ports serving eight single-port NVIDIA ConnectX-7 VPI, ... up to 400 Gb/s "
    "InfiniBand/Ethernet"
)
_NIC_PER_GPU = "one 400 Gb/s NIC per GPU: 400e9 / 8 = 5e10 bytes/s each way"


def _dcn(host: int, shape: str) -> Link:
    return Link("DCN", 2.5e10 / host, Source(_SCALING, _SCALING_DCN.format(host=host, shape=shape)))


def _dcn_per_chip(gbps: int, column: str) -> Link:
    """A TPU's DCN share as Google's TPU7x page prints it, per chip, in Gb/s (one way: a NIC's
    line rate is per direction)."""
    return Link(
        "DCN",
        gbps * 1e9 / 8,
        Source(
            _TPU7X,
            "Data center network (DCN) bandwidth per chip (Gbps) | 50 | 100 | 100",
            derivation=f"the {column} column: {gbps} Gb/s / 8 bits = {gbps / 8:g} GB/s per chip, "
            "taken as one way (each direction of a full-duplex NIC)",
        ),
    )


def _nic(system: str, says: str) -> Link:
    return Link(
        f"InfiniBand NDR ({system})",
        400e9 / 8,
        Source(_DGX_BASEPOD, says, derivation=_NIC_PER_GPU),
    )


# -- Google TPUs: no sparse figures are quoted --------------------------------
_TPUS = [
    Chip(
        name="TPU v4",
        vendor="Google",
        aliases=("v4", "tpuv4"),
        device_names=("TPU v4",),
        explorers=("step",),  # offered by the training-step explorer
        network=_dcn(4, "2x2x1"),
        peaks=(
            _peak("bf16", 275 * T, _V4, "Peak compute per chip (bf16): 275 TFLOPs"),
            _peak("int8", 275 * T, _V4, "Peak compute per chip (int8): 275 TOPs"),
            _tpu_vpu(275 * T),
        ),
        hbm_bytes=32 * GiB,
        hbm_bytes_per_s=1200 * G,
        memory_kind="HBM2",
        memory_source=Source(_V4, "HBM2 capacity and bandwidth: 32 GiB, 1200 GBps"),
        interconnect=Link(
            "ICI",
            4.5e10,
            Source(
                _SCALING,
                "TPU v4: ICI one-way bandwidth 4.5e10 bytes/s per link, 6 links (3D torus)",
            ),
            count=6,
            topology="torus",
            wraparound_multiple=4,  # _SCALING: "Any multiple of a full cube (e.g. 4x4x4 or
            # 4x4x8) will have wraparounds"; smaller slices (2x2x1, 2x2x2, 2x2x4) have none
            axis_chips=16,  # _SCALING: superpod "16x16x16 for TPU v4"
            domain_chips=4096,
            vendor=Source(
                _V4,
                "Interconnect topology | 3D mesh; The connections can be configured as a 3D "
                "torus on slices where the topology, AxBxC, is either 2A=B=C or 2A=2B=C, where "
                "each dimension is a multiple of 4. For example, 4x4x8, 4x8x8, or 12x12x24.",
                derivation="the sentence names the slices that may also be wired as a twisted "
                "torus (its next words: 'see Twisted tori topologies'; the types-topologies "
                "page: such topologies 'also have topology variants optimized for all-to-all'); "
                "every slice of whole 4x4x4 cubes wraps round, as _SCALING says and Jouppi et "
                "al. 2023 call the 16x16x16 system a 3D torus. Google quotes no per-chip ICI "
                "bandwidth for v4",
            ),
        ),
        host_link=Link(
            "PCIe",
            1.6e10,
            Source(_SCALING, "PCIe bandwidth for TPU v4 is 16GB / second each way"),
        ),
    ),
    Chip(
        name="TPU v5e",
        vendor="Google",
        aliases=("v5e", "tpuv5e", "v5litepod", "tpuv5lite"),
        device_names=("TPU v5 lite", "TPU v5e"),
        peaks=(
            _peak("bf16", 197 * T, _V5E, "Peak compute per chip (bf16): 197 TFLOPs"),
            _peak(
                "int8",
                394 * T,
                _SCALING,
                "TPU v5e | FLOPs/s/chip (int8) | 3.94e14",
                derivation="the scaling book's table (TPU v5e row); Google's v5e page prints "
                "'Peak compute per chip (Int8) | 393 TOPs', 0.25 % lower",
                secondary=True,
            ),
            _tpu_vpu(197 * T),
        ),
        hbm_bytes=16 * G,
        hbm_bytes_per_s=819 * G,
        memory_kind="HBM2",
        memory_source=Source(_V5E, "HBM2 capacity and bandwidth: 16 GB, 819 GBps"),
        interconnect=Link(
            "ICI",
            4.5e10,
            Source(
                _SCALING,
                "TPU v5e: ICI one-way bandwidth 4.5e10 bytes/s per link, 4 links (2D torus)",
            ),
            count=4,
            topology="torus",
            wraparound_multiple=16,  # _SCALING: "smaller topologies can be requested without
            # wraps on dims <16" (v5e and v6e pods are a 16x16 2D torus)
            axis_chips=16,
            domain_chips=256,
            vendor=Source(
                _V5E,
                "Bidirectional inter-chip interconnect (ICI) bandwidth (per chip): "
                "400 GBps; ICI ports per chip: 4; Interconnect topology: 2D torus",
            ),
            vendor_one_way_bytes_per_s=400 * G / 4 / 2,
        ),
        host_link=Link(
            "PCIe",
            1.5e10,
            Source(_SCALING, "PCIe bandwidth is typically around `1.5e10` bytes / second per chip"),
        ),
        network=Link(
            "DCN",
            6.4e12 / 256 / 8,
            Source(
                _V5E,
                "TPU Pod size: 256 chips; Data center network bandwidth per Pod: 6.4 Tbps",
                derivation="6.4e12 bits/s over the pod's 256 chips = 25 Gb/s per chip, / 8 bits "
                "= 3.125e9 bytes/s per chip, taken as one way (each direction of a full-duplex "
                "NIC); the same as the scaling book's 'DCN bandwidth is typically around "
                "2.5e10 bytes / second per host' over a v5e host's 8 chips",
            ),
        ),
        notes="HBM bandwidth is 8.19e11 B/s (819 GBps); some texts round it to 8.1e11 or 8.2e11. "
        "Google quotes ICI as 400 GBps bidirectional per chip over 4 ports (5e10 B/s per "
        "port each way); the catalog keeps the 4.5e10 B/s per-link figure that the worked "
        "examples of How To Scale Your Model use.",
    ),
    Chip(
        name="TPU v5p",
        vendor="Google",
        aliases=("v5p", "tpuv5p"),
        device_names=("TPU v5", "TPU v5p"),
        explorers=("serving",),  # offered by the serving explorer
        network=_dcn_per_chip(50, "v5p"),  # Google's own figure (same 6.25 GB/s as 2.5e10 / 4)
        peaks=(
            _peak("bf16", 459 * T, _V5P, "Peak compute per chip (bf16): 459 TFLOPs"),
            _peak(
                "int8",
                918 * T,
                _SCALING,
                "TPU v5p | FLOPs/s/chip (int8) | 9.18e14",
                derivation="the scaling book's table (TPU v5p row); Google's v5p page prints no "
                "int8 figure (its table lists BF16 and FP8, both 459 TFLOPs)",
                secondary=True,
            ),
            _tpu_vpu(459 * T),
        ),
        hbm_bytes=95 * G,
        hbm_bytes_per_s=2765 * G,
        memory_kind="HBM2e",
        memory_source=Source(
            _V5P,
            "HBM2e capacity and bandwidth: 95 GB, 2765 GBps",
            derivation="95 GB = 95e9 bytes, as the chip's own page prints it; Google's TPU7x "
            "page tabulates the same chip as 'HBM capacity per chip (GiB) | 95' (v5p column), "
            "which would be 102.0e9 bytes: the two Google pages disagree by 7.4 %, and the "
            "catalog keeps the v5p page's figure (the smaller, so no bound is too generous)",
        ),
        interconnect=Link(
            "ICI",
            9e10,
            Source(
                _SCALING, "TPU v5p: ICI one-way bandwidth 9e10 bytes/s per link, 6 links (3D torus)"
            ),
            count=6,
            topology="torus",
            wraparound_multiple=4,  # _SCALING: wraparound only on multiples of a full 4x4x4 cube
            axis_chips=28,  # _SCALING: superpod "16x20x28 for TPU v5p"
            domain_chips=8960,
            # _V5P: "The largest job that can be scheduled is a 96 cube (6144 chip) job."
            slice_chips=6144,
            vendor=Source(
                _V5P,
                "Bidirectional inter-chip interconnect (ICI) bandwidth (per chip): "
                "1200 GBps; Interconnect topology: 3D torus",
            ),
            vendor_one_way_bytes_per_s=1200 * G / 6 / 2,
        ),
        host_link=Link(
            "PCIe",
            1.5e10,
            Source(_SCALING, "PCIe bandwidth is typically around `1.5e10` bytes / second per chip"),
        ),
        notes="Google's page gives no ICI port count for v5p; the one-way per-port figure "
        "divides 1200 GBps by 6 ports (a 3D torus: two neighbours per axis) and 2 directions. "
        "One job spans at most 6144 of a pod's 8960 chips (Google's v5p page: 'The largest job "
        "that can be scheduled is a 96 cube (6144 chip) job.'); beyond, several slices.",
    ),
    Chip(
        name="TPU v6e",
        vendor="Google",
        aliases=("v6e", "tpuv6e", "trillium"),
        device_names=("TPU v6 lite", "TPU v6e"),
        explorers=("serving",),  # offered by the serving explorer
        # Google prints 100 Gbps per v6e chip (800 Gb/s per 8-chip host): 4x the scaling book's
        # generic 2.5e10 bytes/s per host that the catalog used to divide by 8; v5e (2 x 100
        # Gbps NICs per 8-chip host) and v5p (50 Gbps per chip, cited from Google) agree with it.
        network=_dcn_per_chip(100, "v6e (Trillium)"),
        peaks=(
            _peak("bf16", 918 * T, _V6E, "Peak compute per chip (bf16): 918 TFLOPs"),
            _peak("int8", 1836 * T, _V6E, "Peak compute per chip (Int8): 1836 TOPs"),
            _tpu_vpu(918 * T),
        ),
        hbm_bytes=32 * GiB,
        hbm_bytes_per_s=1638 * G,
        memory_kind="HBM",
        memory_source=Source(
            _TPU7X,
            "HBM capacity per chip (GiB) | 95 | 32 | 192; "
            "HBM bandwidth per chip (GBps) | 2765 | 1638 | 7380",
            derivation="the v6e (Trillium) column of the TPU7x page's table (v5p, v6e, TPU7x): "
            "32 GiB = 32 x 2^30 bytes; 1638 GBps = 1638e9 bytes/s",
        ),
        interconnect=Link(
            "ICI",
            9e10,
            Source(
                _SCALING, "TPU v6e: ICI one-way bandwidth 9e10 bytes/s per link, 4 links (2D torus)"
            ),
            count=4,
            topology="torus",
            wraparound_multiple=16,  # _SCALING: no wraps on dims <16 (16x16 2D torus)
            axis_chips=16,
            domain_chips=256,
            vendor=Source(
                _V6E,
                "Bidirectional inter-chip interconnect (ICI) bandwidth (per chip): "
                "800 GBps; ICI ports per chip: 4; Interconnect topology: 2D torus",
            ),
            vendor_one_way_bytes_per_s=800 * G / 4 / 2,
        ),
        host_link=Link(
            "PCIe",
            3.2e10,
            Source(_SCALING, "Trillium (TPU v6e) has 32GB/s, about 2x higher than v5."),
        ),
        notes="Some texts print 9.1e14 or 9.2e14 for bf16; Google's page says 918 TFLOPs, kept here. "
        "Google quotes ICI as 800 GBps bidirectional per chip over 4 ports. HBM: the v6e page "
        "prints '32 GB', the TPU7x page's comparison table '32' in a GiB column; HBM is built "
        "in binary sizes, so the catalog keeps 32 GiB (34.4e9 bytes).",
    ),
    Chip(
        name="TPU7x",
        vendor="Google",
        aliases=("ironwood", "tpu7x", "tpuv7", "v7", "tpu7"),
        device_names=("TPU7x", "TPU v7"),
        network=_dcn_per_chip(100, "TPU7x (Ironwood)"),
        peaks=(
            _peak("bf16", 2307 * T, _TPU7X, "Peak compute per chip (bf16): 2307 TFLOPs"),
            _peak("fp8", 4614 * T, _TPU7X, "Peak compute per chip (fp8): 4614 TFLOPs"),
            _tpu_vpu(2307 * T),
        ),
        hbm_bytes=192 * GiB,
        hbm_bytes_per_s=7.37 * T,
        memory_kind="HBM3e",
        memory_source=Source(
            _TPU7X,
            "HBM capacity per chip: 192 GiB (Cloud TPU page); "
            "7.37 TB/s HBM bandwidth per chip (Google's Ironwood announcement, "
            + _TPU7X_BLOG
            + ")",
        ),
        interconnect=Link(
            "ICI",
            1200 * G / 6 / 2,
            Source(
                _TPU7X,
                "Bidirectional inter-chip interconnect (ICI) bandwidth per chip (GBps) | 1200 | "
                "800 | 1200",
                derivation="the TPU7x (Ironwood) column: 1200 GBps both ways per chip; one way per "
                "link = 1200 / 6 links / 2 directions = 100 GB/s, assuming 6 ICI links per chip (a "
                "3D torus: two neighbours per axis, as on v5p; the page prints no port count)",
            ),
            count=6,
            topology="torus",
            wraparound_multiple=4,  # assumed as on v5p (slices built of 4x4x4 cubes)
            # Google's cluster tool xpk (github.com/AI-Hypercomputer/xpk, commit 367c8382,
            # src/xpk/core/system_characteristics.py) lists TPU7x topologies as
            # generate_tpu_topologies(max_cubes=144): "A, B and C are integers in range 4..256",
            # "divisible by 4", at most 144 cubes (144 x 64 = 9216 chips), plus 2x2x1, 2x2x2,
            # 2x2x4, 2x4x4; the Cloud page prints no topology table
            axis_chips=256,
            domain_chips=9216,  # _TPU7X: "With a 9,216-chip footprint per Pod"
        ),
        notes="Google prints TPU7x's memory twice: 192 GiB on the Cloud TPU page, '192 GB' in the "
        "Ironwood announcement. The catalog keeps 192 GiB (206.2e9 bytes, shown as 206.2 GB); "
        "a reader who takes the announcement's 192e9 bytes is 7 % lower. The Cloud page prints "
        "HBM bandwidth as 7380 GBps, the announcement 7.37 TB/s; the catalog keeps 7.37 TB/s. "
        "ICI: the Cloud page prints 1200 GBps bidirectional per chip; the per-link figure assumes "
        "6 links, as on the v5p it compares TPU7x with. Slice shapes: Google's pages print none; "
        "the catalog takes them from Google's cluster tool xpk, whose TPU7x topologies are whole "
        "4x4x4 cubes with axes of 4 to 256 chips (at most 144 cubes, the 9216-chip pod) below "
        "one cube 2x2x1 to 2x4x4; that every axis of whole cubes wraps round is assumed, as on "
        "v5p ('TPU7x shares many similarities with TPU v5p', the Cloud page).",
    ),
]

# -- NVIDIA data-centre GPUs: spec sheets print sparse tensor figures ------------
_SPARSE_NOTE = "* shown with sparsity; specifications 1/2 lower without sparsity"

_NVIDIA = [
    Chip(
        name="A100 SXM",
        vendor="NVIDIA",
        aliases=("a100", "a100sxm", "a10080gb", "a100sxm80gb"),
        device_names=("NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"),
        peaks=(
            _peak("fp64", 9.7 * T, _A100, "FP64: 9.7 TFLOPS", unit="vector"),
            _peak("fp32", 19.5 * T, _A100, "FP32: 19.5 TFLOPS", unit="vector"),
            _peak("fp16", 78 * T, _AMPERE, "A100: Peak FP16 (non-Tensor) 78 TFLOPS", unit="vector"),
            _peak("bf16", 39 * T, _AMPERE, "A100: Peak BF16 (non-Tensor) 39 TFLOPS", unit="vector"),
            _peak(
                "tf32",
                156 * T,
                _A100,
                f"Tensor Float 32 (TF32): 156 TFLOPS | 312 TFLOPS*; {_SPARSE_NOTE}",
                sparse=312 * T,
            ),
            _peak(
                "bf16",
                312 * T,
                _A100,
                f"BFLOAT16 Tensor Core: 312 TFLOPS | 624 TFLOPS*; {_SPARSE_NOTE}",
                sparse=624 * T,
            ),
            _peak(
                "fp16",
                312 * T,
                _A100,
                f"FP16 Tensor Core: 312 TFLOPS | 624 TFLOPS*; {_SPARSE_NOTE}",
                sparse=624 * T,
            ),
            _peak(
                "int8",
                624 * T,
                _A100,
                f"INT8 Tensor Core: 624 TOPS | 1248 TOPS*; {_SPARSE_NOTE}",
                sparse=1248 * T,
            ),
        ),
        hbm_bytes=80 * G,
        hbm_bytes_per_s=2039 * G,
        memory_kind="HBM2e",
        memory_source=Source(
            _A100, "A100 80GB SXM: GPU memory 80GB HBM2e, memory bandwidth 2,039 GB/s"
        ),
        interconnect=Link(
            "NVLink 3",
            25 * G,
            Source(
                _A100,
                "NVLink: 600 GB/s",
                derivation="one way per link = 600 GB/s / 12 links / 2 directions = 25 GB/s "
                "(third-generation NVLink: 12 links per A100)",
            ),
            count=12,
            topology="switch",
            domain_chips=8,
        ),
        host_link=_pcie(
            4,
            _A100,
            "PCIe Gen4: 64 GB/s",
        ),
    ),
    Chip(
        name="H100 SXM",
        vendor="NVIDIA",
        aliases=("h100", "h100sxm", "h100sxm5"),
        device_names=("NVIDIA H100 80GB HBM3",),
        explorers=("serving", "step"),  # offered by the serving and training-step explorers
        network=_nic("DGX H100", f"DGX H200 and H100: {_CX7}"),
        peaks=(
            _peak("fp64", 34 * T, _H100, "H100 SXM FP64: 34 teraFLOPS", unit="vector"),
            _peak("fp32", 67 * T, _H100, "H100 SXM FP32: 67 teraFLOPS", unit="vector"),
            _peak(
                "fp16",
                133.8 * T,
                _HOPPER,
                "H100 SXM5: Peak FP16 (non-Tensor) 133.8 TFLOPS",
                unit="vector",
            ),
            _peak(
                "bf16",
                133.8 * T,
                _HOPPER,
                "H100 SXM5: Peak BF16 (non-Tensor) 133.8 TFLOPS",
                unit="vector",
            ),
            _peak(
                "tf32",
                494.5 * T,
                _H100,
                f"TF32 Tensor Core: 989 teraFLOPS*; {_SPARSE_NOTE}",
                sparse=989 * T,
            ),
            _peak(
                "bf16",
                989.5 * T,
                _H100,
                f"BFLOAT16 Tensor Core: 1,979 teraFLOPS*; {_SPARSE_NOTE}",
                sparse=1979 * T,
            ),
            _peak(
                "fp16",
                989.5 * T,
                _H100,
                f"FP16 Tensor Core: 1,979 teraFLOPS*; {_SPARSE_NOTE}",
                sparse=1979 * T,
            ),
            _peak(
                "fp8",
                1979 * T,
                _H100,
                f"FP8 Tensor Core: 3,958 teraFLOPS*; {_SPARSE_NOTE}",
                sparse=3958 * T,
            ),
            _peak(
                "int8",
                1979 * T,
                _H100,
                f"INT8 Tensor Core: 3,958 TOPS*; {_SPARSE_NOTE}",
                sparse=3958 * T,
            ),
        ),
        hbm_bytes=80 * G,
        hbm_bytes_per_s=3.35 * T,
        memory_kind="HBM3",
        memory_source=Source(_H100, "H100 SXM: GPU memory 80GB, GPU memory bandwidth 3.35TB/s"),
        interconnect=Link(
            "NVLink 4",
            25 * G,
            Source(_H100, "NVIDIA NVLink: 900GB/s", derivation=_NVLINK4_PER_LINK),
            count=18,
            topology="switch",
            domain_chips=8,
        ),
        host_link=_pcie(5, _H100, "PCIe Gen5: 128GB/s"),
        notes="Dense bf16 is 1,979/2 = 989.5 TFLOP/s, usually rounded to 989 TFLOP/s; "
        "the 1.98e15 often quoted is the 2:4-sparse figure.",
    ),
    Chip(
        name="H100 PCIe",
        vendor="NVIDIA",
        aliases=("h100pcie",),
        device_names=("NVIDIA H100 PCIe",),
        peaks=(
            _peak("fp64", 26 * T, _H100_PCIE, "FP64: 26 TFLOPS", unit="vector"),
            _peak("fp32", 51 * T, _H100_PCIE, "FP32: 51 TFLOPS", unit="vector"),
            _peak(
                "bf16",
                102 * T,
                _H100_PCIE,
                "FP32: 51 TFLOPS",
                unit="vector",
                derivation="2 x the FP32 figure: Hopper's CUDA cores run bf16 at twice their fp32 "
                "rate (H100 SXM5: 133.8 = 2 x 66.9 TFLOPS in the Hopper whitepaper)",
            ),
            _peak(
                "tf32",
                378 * T,
                _H100_PCIE,
                f"TF32 Tensor Core: 756 teraFLOPS*; {_SPARSE_NOTE}",
                sparse=756 * T,
            ),
            _peak(
                "bf16",
                756.5 * T,
                _H100_PCIE,
                f"BFLOAT16 Tensor Core: 1,513 teraFLOPS*; {_SPARSE_NOTE}",
                sparse=1513 * T,
            ),
            _peak(
                "fp16",
                756.5 * T,
                _H100_PCIE,
                f"FP16 Tensor Core: 1,513 teraFLOPS*; {_SPARSE_NOTE}",
                sparse=1513 * T,
            ),
            _peak(
                "fp8",
                1513 * T,
                _H100_PCIE,
                f"FP8 Tensor Core: 3,026 teraFLOPS*; {_SPARSE_NOTE}",
                sparse=3026 * T,
            ),
            _peak(
                "int8",
                1513 * T,
                _H100_PCIE,
                f"INT8 Tensor Core: 3,026 TOPS*; {_SPARSE_NOTE}",
                sparse=3026 * T,
            ),
        ),
        hbm_bytes=80 * G,
        hbm_bytes_per_s=2.0 * T,
        memory_kind="HBM2e",
        memory_source=Source(
            _H100_PCIE,
            "80 GB HBM2e ... memory bandwidth greater than 2,000 gigabytes per second (GBps)",
        ),
        interconnect=Link(
            "NVLink bridge",
            25 * G,
            Source(
                _H100,
                "NVLink: 600GB/s",
                derivation="one way per link = 600 GB/s / 12 links / 2 directions = 25 GB/s "
                "(an NVLink bridge joins 2 GPUs)",
            ),
            count=12,
            topology="switch",
            domain_chips=2,
        ),
        host_link=_pcie(5, _H100_PCIE, "PCIe Gen5: 128GB/s"),
    ),
    Chip(
        name="H200",
        vendor="NVIDIA",
        aliases=("h200sxm", "h200"),
        device_names=("NVIDIA H200",),
        explorers=("serving",),  # offered by the serving explorer
        network=_nic("DGX H200", f"DGX H200 and H100: {_CX7}"),
        peaks=(
            _peak("fp64", 34 * T, _H200, "H200 SXM FP64: 34 TFLOPS", unit="vector"),
            _peak("fp32", 67 * T, _H200, "H200 SXM FP32: 67 TFLOPS", unit="vector"),
            _peak(
                "bf16",
                133.8 * T,
                _HOPPER,
                "H100 SXM5: Peak BF16 (non-Tensor) 133.8 TFLOPS",
                unit="vector",
                derivation="the H100 SXM5 figure: the H200 is the same GH100 die at the same "
                "clocks (its FP32 and tensor figures equal the H100 SXM's)",
            ),
            _peak(
                "tf32",
                494.5 * T,
                _H200,
                f"TF32 Tensor Core: 989 TFLOPS*; {_SPARSE_NOTE}",
                sparse=989 * T,
            ),
            _peak(
                "bf16",
                989.5 * T,
                _H200,
                f"BFLOAT16 Tensor Core: 1,979 TFLOPS*; {_SPARSE_NOTE}",
                sparse=1979 * T,
            ),
            _peak(
                "fp16",
                989.5 * T,
                _H200,
                f"FP16 Tensor Core: 1,979 TFLOPS*; {_SPARSE_NOTE}",
                sparse=1979 * T,
            ),
            _peak(
                "fp8",
                1979 * T,
                _H200,
                f"FP8 Tensor Core: 3,958 TFLOPS*; {_SPARSE_NOTE}",
                sparse=3958 * T,
            ),
            _peak(
                "int8",
                1979 * T,
                _H200,
                f"INT8 Tensor Core: 3,958 TOPS*; {_SPARSE_NOTE}",
                sparse=3958 * T,
            ),
        ),
        hbm_bytes=141 * G,
        hbm_bytes_per_s=4.8 * T,
        memory_kind="HBM3e",
        memory_source=Source(_H200, "H200 SXM: GPU memory 141GB, GPU memory bandwidth 4.8TB/s"),
        interconnect=Link(
            "NVLink 4",
            25 * G,
            Source(_H200, "NVIDIA NVLink: 900GB/s", derivation=_NVLINK4_PER_LINK),
            count=18,
            topology="switch",
            domain_chips=8,
        ),
        host_link=_pcie(5, _H200, "PCIe Gen5: 128GB/s"),
    ),
    Chip(
        name="B200",
        vendor="NVIDIA",
        aliases=("b200", "hgxb200"),
        device_names=("NVIDIA B200",),
        explorers=("serving", "step"),  # offered by the serving and training-step explorers
        network=_nic(
            "DGX B200",
            "DGX B200: 4x OSFP ports serving 8x single-port NVIDIA ConnectX-7 VPI; Up to 400Gb/s "
            "InfiniBand/Ethernet",
        ),
        peaks=(
            _peak(
                "fp32",
                75 * T,
                _B200,
                "HGX B200 (8 GPUs): FP32 600 TFLOPS",
                unit="vector",
            ),
            _bf16_vector_as_fp32(
                75 * T,
                _B200,
                "HGX B200 (8 GPUs): FP32 600 TFLOPS",
                _BLACKWELL_WHY + "; fp32 per GPU = 600 / 8 = 75",
                factor=2,
            ),
            _peak(
                "tf32",
                1125 * T,
                _B200,
                f"HGX B200 (8 GPUs): TF32 Tensor Core 18 PFLOPS*; {_SPARSE_NOTE}",
                sparse=2250 * T,
            ),
            _peak(
                "bf16",
                2250 * T,
                _B200,
                f"HGX B200 (8 GPUs): FP16/BF16 36 PFLOPS*; {_SPARSE_NOTE}",
                sparse=4500 * T,
            ),
            _peak(
                "fp16",
                2250 * T,
                _B200,
                f"HGX B200 (8 GPUs): FP16/BF16 36 PFLOPS*; {_SPARSE_NOTE}",
                sparse=4500 * T,
            ),
            _peak(
                "fp8",
                4500 * T,
                _B200,
                f"HGX B200 (8 GPUs): FP8 72 PFLOPS*; {_SPARSE_NOTE}",
                sparse=9000 * T,
            ),
            _peak(
                "int8",
                4500 * T,
                _B200,
                f"HGX B200 (8 GPUs): INT8 72 POPS*; {_SPARSE_NOTE}",
                sparse=9000 * T,
            ),
            _peak(
                "fp4",
                9000 * T,
                _B200,
                f"HGX B200 (8 GPUs): FP4 144 PFLOPS*; {_SPARSE_NOTE}",
                sparse=18000 * T,
            ),
        ),
        hbm_bytes=1.4e12 / 8,
        hbm_bytes_per_s=62 * T / 8,
        memory_kind="HBM3e",
        memory_source=Source(
            _B200,
            "HGX B200 (8 GPUs): Total Memory 1.4TB; Memory Bandwidth 62TB/s",
            derivation="per GPU = the system figure / 8: 1.4 TB / 8 = 175 GB; "
            "62 TB/s / 8 = 7.75 TB/s",
        ),
        interconnect=Link(
            "NVLink 5",
            50 * G,
            Source(_B200, "NVLink 5: 1.8TB/s per GPU", derivation=_NVLINK5_PER_LINK),
            count=18,
            topology="switch",
            domain_chips=8,
        ),
        notes="Other NVIDIA material quotes 192 GB and 8 TB/s for B200; the catalog keeps the "
        "HGX B200 page's totals divided by 8 (175 GB, 7.75 TB/s). The page rounds its total: "
        "MLPerf system descriptions name the part 'NVIDIA B200-SXM-180GB' (180 GB, 2.9 % more).",
    ),
    Chip(
        name="GB200",
        vendor="NVIDIA",
        aliases=("gb200", "gb200nvl72", "b200nvl72"),
        device_names=("NVIDIA GB200",),
        peaks=(
            _peak(
                "fp32",
                80 * T,
                _GB200,
                "GB200 NVL72 (72 GPUs): FP32 5,760 TFLOPS",
                unit="vector",
            ),
            _bf16_vector_as_fp32(
                80 * T,
                _GB200,
                "GB200 NVL72 (72 GPUs): FP32 5,760 TFLOPS",
                _BLACKWELL_WHY + "; fp32 per GPU = 5,760 / 72 = 80",
                factor=2,
            ),
            _peak(
                "tf32",
                1250 * T,
                _GB200,
                f"GB200 NVL72 (72 GPUs): TF32 Tensor Core 180 PFLOPS*; {_SPARSE_NOTE}",
                sparse=2500 * T,
            ),
            _peak(
                "bf16",
                2500 * T,
                _GB200,
                f"GB200 NVL72 (72 GPUs): FP16/BF16 Tensor Core 360 PFLOPS*; {_SPARSE_NOTE}",
                sparse=5000 * T,
            ),
            _peak(
                "fp16",
                2500 * T,
                _GB200,
                f"GB200 NVL72 (72 GPUs): FP16/BF16 Tensor Core 360 PFLOPS*; {_SPARSE_NOTE}",
                sparse=5000 * T,
            ),
            _peak(
                "fp8",
                5000 * T,
                _GB200,
                f"GB200 NVL72 (72 GPUs): FP8 Tensor Core 720 PFLOPS*; {_SPARSE_NOTE}",
                sparse=10000 * T,
            ),
            _peak(
                "int8",
                5000 * T,
                _GB200,
                f"GB200 NVL72 (72 GPUs): INT8 Tensor Core 720 POPS*; {_SPARSE_NOTE}",
                sparse=10000 * T,
            ),
            _peak(
                "fp4",
                10000 * T,
                _GB200,
                f"GB200 NVL72 (72 GPUs): FP4 Tensor Core 1,440 PFLOPS*; {_SPARSE_NOTE}",
                sparse=20000 * T,
            ),
        ),
        hbm_bytes=186 * G,
        hbm_bytes_per_s=8 * T,
        memory_kind="HBM3e",
        memory_source=Source(
            _GB200,
            "GB200 NVL72 (72 GPUs): up to 13.4 TB HBM3e, 576 TB/s",
            derivation="per GPU = the rack figure / 72: 186 GB and 8 TB/s",
        ),
        interconnect=Link(
            "NVLink 5",
            50 * G,
            Source(
                _GB200,
                "GB200 NVL72 (72 GPUs): NVLink Bandwidth 130 TB/s",
                derivation="per GPU = 130 TB/s / 72 = 1.8 TB/s; " + _NVLINK5_PER_LINK,
            ),
            count=18,
            topology="switch",
            domain_chips=72,
        ),
        notes="One Blackwell GPU of a GB200 NVL72 rack; rack figures divided by 72.",
    ),
]


def _a100_40gb(a100_80gb: Chip) -> Chip:
    """The A100 SXM 40GB (Colab's A100): the 80GB's compute and NVLink, its own memory."""
    from dataclasses import replace

    return replace(
        a100_80gb,
        name="A100 SXM 40GB",
        aliases=("a10040gb", "a100sxm40gb", "colaba100"),
        device_names=("NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"),
        hbm_bytes=40 * G,
        hbm_bytes_per_s=1555 * G,
        memory_kind="HBM2",
        memory_source=Source(
            _A100, "A100 40GB SXM: GPU memory 40GB HBM2, GPU memory bandwidth 1,555GB/s"
        ),
        notes="The 40 GB A100 SXM (Google Colab's A100): the same tensor rates and NVLink as the "
        "80 GB entry, 40 GB of HBM2 at 1,555 GB/s instead of 80 GB of HBM2e at 2,039 GB/s.",
    )


_NVIDIA.insert(1, _a100_40gb(_NVIDIA[0]))

_NVIDIA.append(
    Chip(
        name="L40S",
        vendor="NVIDIA",
        aliases=("l40s",),
        device_names=("NVIDIA L40S",),
        peaks=(
            _peak("fp32", 91.6 * T, _L40S, "FP32: 91.6 TFLOPS", unit="vector"),
            _peak(
                "bf16",
                91.6 * T,
                _L40S,
                "FP32: 91.6 TFLOPS",
                unit="vector",
                derivation="the FP32 figure: the L40S is an Ada chip, and Ada prints bf16 "
                "(non-Tensor) equal to FP32 (RTX 4090: 82.6 and 82.6 in the Ada whitepaper)",
            ),
            _peak(
                "tf32",
                183 * T,
                _L40S,
                f"TF32 Tensor Core: 183 | 366 TFLOPS*; {_SPARSE_NOTE}",
                sparse=366 * T,
            ),
            _peak(
                "bf16",
                362.05 * T,
                _L40S,
                f"BFLOAT16 Tensor Core: 362.05 | 733 TFLOPS*; {_SPARSE_NOTE}",
                sparse=733 * T,
            ),
            _peak(
                "fp16",
                362.05 * T,
                _L40S,
                f"FP16 Tensor Core: 362.05 | 733 TFLOPS*; {_SPARSE_NOTE}",
                sparse=733 * T,
            ),
            _peak(
                "fp8",
                733 * T,
                _L40S,
                f"FP8 Tensor Core: 733 | 1,466 TFLOPS*; {_SPARSE_NOTE}",
                sparse=1466 * T,
            ),
        ),
        hbm_bytes=48 * G,
        hbm_bytes_per_s=864 * G,
        memory_kind="GDDR6",
        memory_source=Source(_L40S, "GPU Memory: 48GB GDDR6 with ECC; Memory Bandwidth: 864GB/s"),
        host_link=_pcie(4, _L40S, "Interconnect Interface: PCIe Gen4 x16: 64GB/s bidirectional"),
        notes="A data-centre Ada card (no NVLink): its tensor figures are the fp32-accumulate "
        "rates, unlike a GeForce card's. NVIDIA's L40S page prints no INT8 figure.",
    )
)

# Not in the catalog (issue 30 asked for them; no vendor page in reach prints their figures):
# - B300 (Blackwell Ultra): NVIDIA's technical blog ("Inside NVIDIA Blackwell Ultra",
#   developer.nvidia.com) prints "15 PetaFLOPS dense NVFP4 compute" but, in the text found, no
#   bf16 or int8 rate; the cut int8 and fp64 rates appear only in third-party copies, which
#   disagree (int8 dense per GPU: 0.15 POPS, 0.319 POPS, or "2 POPS*" with sparsity for an HGX
#   board). A chip without a printed bf16 peak cannot join the chapters' every-chip tables.
# - A10G (AWS G5): NVIDIA prints figures for the A10 only; AWS prints "NVIDIA A10G" with 24 GiB
#   per GPU and no FLOP/s or memory bandwidth. The A10's figures would be a guess for the A10G.
# Searched again (issue 30, fourth session; the search tool's pages and docs corpora): "B300
# datasheet dense FP8 TFLOPS", "Blackwell Ultra HGX B300 specifications", "DGX B300 datasheet",
# "GB300 NVL72 specifications INT8", "A10G tensor core TFLOPS AWS g5", "NVIDIA A10 datasheet".
# Found only the same NVIDIA blog ("15 PetaFLOPS dense NVFP4" in the text reached) and third-
# party tables that still disagree on B300 int8 (0.15 / 0.319 POPS dense, "2 POPS*" per HGX
# board); no nvidia.com or aws.amazon.com page printing B300, A10 or A10G rates.

# -- AWS Trainium: the Neuron documentation prints per-chip figures -------------------------
_AWS = [
    Chip(
        name="Trainium2",
        vendor="AWS",
        aliases=("trainium2", "trn2"),
        peaks=(
            _peak(
                "bf16",
                667 * T,
                _TRN2,
                "Eight NeuronCore-v3 that collectively deliver: 1,299 FP8 TFLOPS; "
                "667 BF16/FP16/TF32 TFLOPS; 2,563 FP8/FP16/BF16/TF32 sparse TFLOPS; "
                "181 FP32 TFLOPS",
                sparse=2563 * T,
            ),
            _peak(
                "fp16",
                667 * T,
                _TRN2,
                "Eight NeuronCore-v3 that collectively deliver: 667 BF16/FP16/TF32 TFLOPS; "
                "2,563 FP8/FP16/BF16/TF32 sparse TFLOPS",
                sparse=2563 * T,
            ),
            _peak(
                "fp8",
                1299 * T,
                _TRN2,
                "Eight NeuronCore-v3 that collectively deliver: 1,299 FP8 TFLOPS; "
                "2,563 FP8/FP16/BF16/TF32 sparse TFLOPS",
                sparse=2563 * T,
            ),
            _peak(
                "fp32",
                181 * T,
                _TRN2,
                "Eight NeuronCore-v3 that collectively deliver: 181 FP32 TFLOPS",
            ),
        ),
        hbm_bytes=96 * GiB,
        hbm_bytes_per_s=2.9 * T,
        memory_source=Source(
            _TRN2_NKI,
            "4 HBM stacks with a total device memory capacity of 96GiB and bandwidth of 2.9TB/s",
        ),
        notes="AWS's sparse figure (2,563 TFLOPS) is for its own structured-sparsity patterns, "
        "not NVIDIA's 2:4, so it is not twice the dense figure. NeuronLink-v3 (the chip-to-chip "
        "link) is not stored: the catalog holds no per-link figure AWS prints for it.",
    ),
]

# -- AMD Instinct: spec pages print dense figures and, apart, "with structured sparsity" ones -
_IF_MI300 = (
    "AMD Infinity Fabric: 7 links, 128 GB/s peak per link; "
    "8 GPUs fully connected (a link to each of the other 7)"
)
_IF_MI355 = (
    "AMD Infinity Fabric: 7 links, 153.6 GB/s peak per link; "
    "8 GPUs fully connected (a link to each of the other 7)"
)


def _amd_pair(dtype, dense, sparse, url, unit_word="TFLOPs"):
    """A dense figure and the separately printed structured-sparsity one, both as printed."""
    label = dtype.upper()
    return _peak(
        dtype,
        dense * T,
        url,
        f"Peak {label}: {dense:,} {unit_word}; "
        f"Peak {label} with Structured Sparsity: {sparse:,} {unit_word}",
        sparse=sparse * T,
    )


def _amd(
    name, url, aliases, figures, hbm_gb, tbps, mem_kind, link_gb=128, link_says=_IF_MI300, **more
):
    """An AMD Instinct chip, which ROCm's torch names "AMD Instinct <name>" (a virtual function,
    as on some clouds, "AMD Instinct <name> VF"). `figures`: dtype -> (dense, sparse) TFLOP/s as printed, plus
    "fp32" and optionally "fp64" -> the FP32/FP64 matrix figure."""
    fp32, fp64 = figures["fp32"], figures.get("fp64")
    fp64_peak = (
        () if fp64 is None else (_peak("fp64", fp64 * T, url, f"Peak FP64 Matrix: {fp64} TFLOPs"),)
    )
    pairs = tuple(
        _amd_pair(d, *figures[d], url, "TOPs" if d == "int8" else "TFLOPs")
        for d in ("bf16", "fp16", "fp8", "int8")
    )
    vector = _bf16_vector_as_fp32(
        fp32 * T,
        url,
        f"Peak FP32 Vector: {fp32} TFLOPs",
        "AMD prints FP32 vector and matrix rates, no bf16 vector rate",
    )
    one_way = link_gb / 2
    return Chip(
        name=name,
        vendor="AMD",
        aliases=aliases,
        device_names=(f"AMD Instinct {name}", f"AMD Instinct {name} VF"),
        peaks=fp64_peak
        + (_peak("fp32", fp32 * T, url, f"Peak FP32 Matrix: {fp32} TFLOPs"),)
        + pairs
        + (vector,),
        hbm_bytes=hbm_gb * G,
        hbm_bytes_per_s=tbps * T,
        memory_kind=mem_kind,
        memory_source=Source(
            url, f"Memory: {hbm_gb} GB {mem_kind}; peak memory bandwidth {tbps} TB/s"
        ),
        interconnect=Link(
            "Infinity Fabric",
            one_way * G,
            Source(
                url,
                link_says,
                derivation=f"one way = {link_gb:g} GB/s per link (both directions) / 2",
            ),
            count=7,
            topology="mesh",
            domain_chips=8,
        ),
        host_link=_pcie(5, url, "PCIe Gen 5 x16: 128 GB/s"),
        **more,
    )


_MI300_FIGURES = {
    "bf16": (1307.4, 2614.9),
    "fp16": (1307.4, 2614.9),
    "fp8": (2614.9, 5229.8),
    "int8": (2614.9, 5229.8),
    "fp32": 163.4,
    "fp64": 163.4,
}
_AMD_CHIPS = [
    _amd(
        "MI300X",
        _MI300X,
        ("mi300x", "mi300", "instinctmi300x"),
        _MI300_FIGURES,
        192,
        5.3,
        "HBM3",
        explorers=("serving",),  # offered by the serving explorer
    ),
    _amd("MI325X", _MI325X, ("mi325x", "instinctmi325x"), _MI300_FIGURES, 256, 6.0, "HBM3E"),
    _amd(
        "MI355X",
        _MI355X,
        ("mi355x", "instinctmi355x"),
        {
            "bf16": (2516.6, 5033.2),
            "fp16": (2516.6, 5033.2),
            "fp8": (5033.2, 10066.4),
            "int8": (5033.2, 10066.4),
            "fp32": 157.3,
        },
        288,
        8.0,
        "HBM3E",
        link_gb=153.6,
        link_says=_IF_MI355,
    ),
]

# -- consumer and Colab GPUs: two accumulate rates on GeForce cards -------------
_CONSUMER = [
    Chip(
        name="RTX 3090",
        vendor="NVIDIA",
        aliases=("3090", "rtx3090", "geforcertx3090"),
        device_names=("NVIDIA GeForce RTX 3090",),
        peaks=(
            _peak(
                "fp32",
                35.6 * T,
                _GA102,
                "GeForce RTX 3090: Peak FP32 TFLOPS (non-Tensor) 35.6",
                unit="vector",
            ),
            _peak(
                "fp16",
                35.6 * T,
                _GA102,
                "GeForce RTX 3090: Peak FP16 TFLOPS (non-Tensor) 35.6",
                unit="vector",
            ),
            _peak(
                "bf16",
                35.6 * T,
                _GA102,
                "GeForce RTX 3090: Peak BF16 TFLOPS (non-Tensor) 35.6",
                unit="vector",
            ),
            _peak(
                "bf16",
                71 * T,
                _GA102,
                "Peak BF16 Tensor TFLOPS with FP32 Accumulate: 71/142 (dense/sparse)",
                sparse=142 * T,
            ),
            _peak(
                "fp16",
                71 * T,
                _GA102,
                "Peak FP16 Tensor TFLOPS with FP32 Accumulate: 71/142 (dense/sparse)",
                sparse=142 * T,
            ),
            _peak(
                "fp16",
                142 * T,
                _GA102,
                "Peak FP16 Tensor TFLOPS with FP16 Accumulate: 142/284 (dense/sparse)",
                sparse=284 * T,
                accumulate="fp16",
            ),
            _peak(
                "tf32",
                35.6 * T,
                _GA102,
                "Peak TF32 Tensor TFLOPS: 35.6/71 (dense/sparse)",
                sparse=71 * T,
            ),
            _peak(
                "int8",
                284 * T,
                _GA102,
                "Peak INT8 Tensor TOPS: 284/568 (dense/sparse)",
                sparse=568 * T,
                accumulate="int32",
            ),
        ),
        hbm_bytes=24 * G,
        hbm_bytes_per_s=936 * G,
        memory_kind="GDDR6X",
        memory_source=Source(_GA102, "GeForce RTX 3090: 24 GB GDDR6X, memory bandwidth 936 GB/sec"),
        host_link=_pcie(4),
    ),
    Chip(
        name="RTX 4090",
        vendor="NVIDIA",
        aliases=("4090", "rtx4090", "geforcertx4090"),
        device_names=("NVIDIA GeForce RTX 4090",),
        peaks=(
            _peak(
                "fp32",
                82.6 * T,
                _ADA,
                "GeForce RTX 4090: Peak FP32 TFLOPS (non-Tensor) 82.6",
                unit="vector",
            ),
            _peak(
                "fp16",
                82.6 * T,
                _ADA,
                "GeForce RTX 4090: Peak FP16 TFLOPS (non-Tensor) 82.6",
                unit="vector",
            ),
            _peak(
                "bf16",
                82.6 * T,
                _ADA,
                "GeForce RTX 4090: Peak BF16 TFLOPS (non-Tensor) 82.6",
                unit="vector",
            ),
            _peak(
                "bf16",
                165.2 * T,
                _ADA,
                "Peak BF16 Tensor TFLOPS with FP32 Accumulate: 165.2/330.4 (dense/sparse)",
                sparse=330.4 * T,
            ),
            _peak(
                "fp16",
                165.2 * T,
                _ADA,
                "Peak FP16 Tensor TFLOPS with FP32 Accumulate: 165.2/330.4 (dense/sparse)",
                sparse=330.4 * T,
            ),
            _peak(
                "fp16",
                330.3 * T,
                _ADA,
                "Peak FP16 Tensor TFLOPS with FP16 Accumulate: 330.3/660.6 (dense/sparse)",
                sparse=660.6 * T,
                accumulate="fp16",
            ),
            _peak(
                "fp8",
                330.3 * T,
                _ADA,
                "Peak FP8 Tensor TFLOPS with FP32 Accumulate: 330.3/660.6 (dense/sparse)",
                sparse=660.6 * T,
            ),
            _peak(
                "fp8",
                660.6 * T,
                _ADA,
                "Peak FP8 Tensor TFLOPS with FP16 Accumulate: 660.6/1321.2 (dense/sparse)",
                sparse=1321.2 * T,
                accumulate="fp16",
            ),
            _peak(
                "int8",
                660.6 * T,
                _ADA,
                "Peak INT8 Tensor TOPS: 660.6/1321.2 (dense/sparse)",
                sparse=1321.2 * T,
                accumulate="int32",
            ),
        ),
        hbm_bytes=24 * G,
        hbm_bytes_per_s=1008 * G,
        memory_kind="GDDR6X",
        memory_source=Source(_ADA, "GeForce RTX 4090: 24 GB GDDR6X, memory bandwidth 1008 GB/sec"),
        host_link=_pcie(4),
    ),
    Chip(
        name="RTX 5090",
        vendor="NVIDIA",
        aliases=("5090", "rtx5090", "geforcertx5090"),
        device_names=("NVIDIA GeForce RTX 5090",),
        peaks=(
            _peak(
                "fp32",
                104.8 * T,
                _RTX_BW,
                "GeForce RTX 5090: Peak FP32 TFLOPS (non-Tensor) 104.8",
                unit="vector",
            ),
            _peak(
                "bf16",
                104.8 * T,
                _RTX_BW,
                "GeForce RTX 5090: Peak FP32 TFLOPS (non-Tensor) 104.8",
                unit="vector",
                derivation="the FP32 figure: GeForce cards print their bf16 (non-Tensor) rate equal "
                "to FP32 (RTX 3090: 35.6 and 35.6; RTX 4090: 82.6 and 82.6)",
            ),
            _peak(
                "bf16",
                209.5 * T,
                _RTX_BW,
                "Peak BF16 Tensor TFLOPS with FP32 Accumulate: 209.5/419 (dense/sparse)",
                sparse=419 * T,
            ),
            _peak(
                "fp16",
                209.5 * T,
                _RTX_BW,
                "Peak FP16 Tensor TFLOPS with FP32 Accumulate: 209.5/419 (dense/sparse)",
                sparse=419 * T,
            ),
        ),
        hbm_bytes=32 * G,
        hbm_bytes_per_s=1792 * G,
        memory_kind="GDDR7",
        memory_source=Source(
            _RTX_BW, "GeForce RTX 5090: 32 GB GDDR7, memory bandwidth 1792 GB/sec"
        ),
        host_link=_pcie(5),
    ),
    Chip(
        name="T4",
        vendor="NVIDIA",
        aliases=("t4", "teslat4", "colabt4"),
        device_names=("Tesla T4",),
        peaks=(
            _peak("fp32", 8.1 * T, _T4, "Single-Precision: 8.1 TFLOPS", unit="vector"),
            _peak(
                "fp16",
                2 * 8.1 * T,
                _T4,
                "Single-Precision: 8.1 TFLOPS",
                unit="vector",
                derivation="2 x the FP32 figure: Turing's CUDA cores run fp16 as packed pairs "
                "(HFMA2), twice their fp32 rate, as the Turing whitepaper's tables print for every "
                "Turing GPU (Peak FP16 TFLOPS (non-Tensor) = 2 x Peak FP32 TFLOPS)",
            ),
            _peak("fp16", 65 * T, _T4, "Mixed-Precision (FP16/FP32): 65 TFLOPS"),
            _peak("int8", 130 * T, _T4, "INT8: 130 TOPS", accumulate="int32"),
        ),
        hbm_bytes=16 * G,
        hbm_bytes_per_s=320 * G,
        memory_kind="GDDR6",
        memory_source=Source(_T4, "GPU Memory: 16 GB GDDR6, 320+ GB/s"),
        host_link=_pcie(3, _T4, "Interconnect Bandwidth: 32 GB/sec"),
        notes="T4 (Turing) has no bf16 tensor cores; use fp16.",
    ),
    Chip(
        name="L4",
        vendor="NVIDIA",
        aliases=("l4", "colabl4"),
        device_names=("NVIDIA L4",),
        peaks=(
            _peak("fp32", 30.3 * T, _L4, "FP32: 30.3 teraFLOPs", unit="vector"),
            _peak(
                "bf16",
                30.3 * T,
                _L4,
                "FP32: 30.3 teraFLOPs",
                unit="vector",
                derivation="the FP32 figure: the L4 is an Ada chip, and Ada prints bf16 (non-Tensor) "
                "equal to FP32 (RTX 4090: 82.6 and 82.6 in the Ada whitepaper)",
            ),
            _peak(
                "tf32",
                60 * T,
                _L4,
                f"TF32 Tensor Core: 120 teraFLOPS*; {_SPARSE_NOTE}",
                sparse=120 * T,
            ),
            _peak(
                "bf16",
                121 * T,
                _L4,
                f"BFLOAT16 Tensor Core: 242 teraFLOPS*; {_SPARSE_NOTE}",
                sparse=242 * T,
            ),
            _peak(
                "fp16",
                121 * T,
                _L4,
                f"FP16 Tensor Core: 242 teraFLOPS*; {_SPARSE_NOTE}",
                sparse=242 * T,
            ),
            _peak(
                "fp8",
                242.5 * T,
                _L4,
                f"FP8 Tensor Core: 485 teraFLOPS*; {_SPARSE_NOTE}",
                sparse=485 * T,
            ),
            _peak(
                "int8",
                242.5 * T,
                _L4,
                f"INT8 Tensor Core: 485 TOPS*; {_SPARSE_NOTE}",
                sparse=485 * T,
            ),
        ),
        hbm_bytes=24 * G,
        hbm_bytes_per_s=300 * G,
        memory_kind="GDDR6",
        memory_source=Source(_L4, "GPU memory: 24GB; GPU memory bandwidth: 300GB/s"),
        host_link=_pcie(4, _L4, "Interconnect: PCIe Gen4 x16 64GB/s"),
    ),
]


#: name -> Chip, in the order the book lists them.
CATALOG: dict[str, Chip] = {c.name: c for c in _TPUS + _NVIDIA + _AMD_CHIPS + _AWS + _CONSUMER}
_USER_CHIPS: dict[str, Chip] = {}


#: While set, `get_chip` looks names up here, not in the catalog: {_key(name): Chip} of a
#: homework edition's frozen figures (roofline.exercises.editions). None: the catalog.
FROZEN_CHIPS: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "frozen_chips", default=None
)


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.lower())


def _index() -> dict[str, Chip]:
    index = {}
    for chip in list(CATALOG.values()) + list(_USER_CHIPS.values()):
        index[_key(chip.name)] = chip
        for alias in chip.aliases:
            index.setdefault(_key(alias), chip)
        # "TPU v5e" also answers to "v5e"; "RTX 3090" to "3090"
        for prefix in ("tpu", "rtx", "nvidia", "amd", "instinct", "geforce"):
            key = _key(chip.name)
            if key.startswith(prefix) and len(key) > len(prefix):
                index.setdefault(key[len(prefix) :], chip)
    return index


def chips_shown_in(explorer: str) -> tuple[str, ...]:
    """The catalog chips whose entry offers them in `explorer` ("serving", "step"; the
    `Chip.explorers` field), in book order. Registered chips are not offered: the explorers'
    web pages are built from the catalog alone."""
    return tuple(c.name for c in CATALOG.values() if explorer in c.explorers)


def list_chips() -> list[str]:
    """Names of every chip in the catalog (and any you registered), in book order."""
    return list(CATALOG) + list(_USER_CHIPS)


def get_chip(name) -> Chip:
    """Look a chip up by name or alias, ignoring case, spaces and dashes.

    get_chip("v5e"), get_chip("TPU v5e") and get_chip("tpu-v5e") are the same chip.
    A `Chip` passed in is returned as it is. An unknown name raises ValueError
    naming the closest known chips.
    """
    if isinstance(name, Chip):
        return name
    if not isinstance(name, str):
        raise TypeError(f"chip name must be text such as 'H100' or 'TPU v5e', got {name!r}")
    frozen = FROZEN_CHIPS.get()  # a homework edition's frozen figures, while one is read
    index = _index() if frozen is None else frozen
    key = _key(name)
    if key in index:
        return index[key]
    for prefix in ("tpu", "nvidia", "amd", "instinct", "geforce", "rtx"):
        if key.startswith(prefix) and key[len(prefix) :] in index:
            return index[key[len(prefix) :]]
    hint = closest_names(key, {k: c.name for k, c in index.items()}, list_chips())
    raise ValueError(f"unknown chip {name!r}.{hint}")


def chip_for_device(device_name) -> Chip | None:
    """The chip whose `device_names` hold `device_name`, or None when no entry does.

    `device_name` is what PyTorch (``torch.cuda.get_device_name()``) or JAX
    (``device.device_kind``) prints; case, spaces and dashes are ignored. None, rather than
    a near match, for a device the catalog lacks or a variant with other figures:

    >>> chip_for_device("NVIDIA H100 80GB HBM3").name
    'H100 SXM'
    >>> chip_for_device("TPU v5 lite").name
    'TPU v5e'
    >>> chip_for_device("NVIDIA A100-SXM4-40GB").name
    'A100 SXM 40GB'
    >>> chip_for_device("NVIDIA A100 80GB PCIe") is None
    True
    """
    if not isinstance(device_name, str) or not device_name.strip():
        return None
    key = _key(device_name)
    found = [
        chip
        for chip in list(CATALOG.values()) + list(_USER_CHIPS.values())
        if key in {_key(n) for n in chip.device_names}
    ]
    return found[0] if found else None


def closest_names(key: str, index: dict, known) -> str:
    """A hint for an unknown name: " Closest: a, b, c." from `index` (lookup key -> display
    name, keys normalised as `key` is), else " Known: ..." listing `known`. Shared by the chip
    and model catalogs."""
    close = difflib.get_close_matches(key, list(index), n=5, cutoff=0.4)
    names = []
    for k in close:
        if index[k] not in names:
            names.append(index[k])
    return f" Closest: {', '.join(names[:3])}." if names else f" Known: {', '.join(known)}."


def register_chip(chip: Chip) -> Chip:
    """Make your own `Chip` findable by `get_chip` (for this Python session)."""
    if not isinstance(chip, Chip):
        raise TypeError("register_chip takes a roofline.Chip")
    if chip.name in CATALOG:
        raise ValueError(f"{chip.name!r} is a catalog chip; give yours another name")
    _USER_CHIPS[chip.name] = chip
    return chip
