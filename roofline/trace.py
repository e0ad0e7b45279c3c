"""A PyTorch profile on the roofline: `place_trace(path_or_dict)`.

Reads the Chrome-trace JSON that ``torch.profiler`` exports (``prof.export_chrome_trace``,
recorded with ``record_shapes=True``): each operator event (``cat`` "cpu_op") carries its
input shapes (``args["Input Dims"]``) and types (``args["Input type"]``). On a GPU each
kernel event (``cat`` "kernel") names the operator that launched it through its
``args["External id"]``, or through its ``args["correlation"]``, shared with the CUDA runtime
call (``cat`` "cuda_runtime") that carries the External id.

Operators the book has a formula for get FLOPs and bytes from it (source "formula"): matmuls
(``aten::mm``, ``matmul``, ``bmm``, ``addmm``, ``linear``: 2 FLOPs per multiply-add, each
operand read once and the result written once), elementwise ops (1 FLOP per output element,
inputs read and output written), softmax, layer norm and scaled-dot-product attention (see
`FORMULAS`). An operator inside another known one (``aten::mm`` inside ``aten::linear``) is
counted with its parent, not twice. Operators without a formula are kept, with their time, in
`TracePlacement.unknown`.

Time: on a GPU, the sum of the durations of the kernels the operator (or its children)
launched; on a CPU, the operator's own duration (``dur``, in microseconds in the file).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["TraceRow", "TracePlacement", "place_trace", "FORMULAS"]

#: PyTorch's names of element types in a trace -> (the book's dtype or None, bytes each).
TORCH_TYPES = {
    "float": ("fp32", 4),
    "double": ("fp64", 8),
    "c10::Half": ("fp16", 2),
    "c10::BFloat16": ("bf16", 2),
    "c10::Float8_e4m3fn": ("fp8", 1),
    "c10::Float8_e5m2": ("fp8", 1),
    "signed char": ("int8", 1),
    "unsigned char": (None, 1),
    "bool": (None, 1),
    "short int": (None, 2),
    "int": (None, 4),
    "long int": (None, 8),
}

MATMULS = {"aten::mm", "aten::matmul", "aten::bmm", "aten::addmm", "aten::linear", "aten::baddbmm"}
ELEMENTWISE = {
    f"aten::{op}{suffix}"
    for op in (
        "add sub mul div relu gelu silu sigmoid tanh exp log neg sqrt rsqrt pow abs "
        "clamp maximum minimum square reciprocal"
    ).split()
    for suffix in ("", "_")
}
SOFTMAX = {"aten::softmax", "aten::_softmax", "aten::log_softmax", "aten::_log_softmax"}
LAYER_NORM = {"aten::layer_norm", "aten::native_layer_norm"}
#: The attention operators, each with the position of `is_causal` among its inputs (their
#: ATen signatures: the public op and the math fallback take attn_mask first; flash takes no
#: mask; efficient and cuDNN take attn_bias and compute_log_sumexp).
IS_CAUSAL_INPUT = {
    "aten::scaled_dot_product_attention": 5,
    "aten::_scaled_dot_product_attention_math": 5,
    "aten::_scaled_dot_product_flash_attention": 4,
    "aten::_scaled_dot_product_flash_attention_for_cpu": 4,
    "aten::_scaled_dot_product_efficient_attention": 6,
    "aten::_scaled_dot_product_cudnn_attention": 6,
}
ATTENTION = set(IS_CAUSAL_INPUT)

#: FLOP conventions per element for the non-matmul formulas (exp counted as 1 FLOP, as the
#: book's `roofline.elementwise` does; it runs on slower special-function units).
SOFTMAX_FLOPS_PER_ELEMENT = 5  # max, subtract, exp, sum, divide
LAYER_NORM_FLOPS_PER_ELEMENT = 7  # mean, subtract, square, sum, scale by 1/sigma, gamma, beta

FORMULAS = {
    "matmul": "2 FLOPs per multiply-add; read both operands (and bias), write the result",
    "elementwise": "1 FLOP per output element; read every tensor input, write the output",
    "softmax": f"{SOFTMAX_FLOPS_PER_ELEMENT} FLOPs per element; read the input, write the output",
    "layer norm": (
        f"{LAYER_NORM_FLOPS_PER_ELEMENT} FLOPs per element; read input, weight and bias, "
        "write the output"
    ),
    "attention": (
        "fused: 4 B H T_q T d_h FLOPs (halved when the trace records is_causal=True); read Q, K, "
        "V, write O (roofline.transformer.fused_attention)"
    ),
}


# ---------------------------------------------------------------- rows


@dataclass(frozen=True)
class TraceRow:
    """One operator of the trace. flops/bytes are None for an operator with no formula."""

    name: str
    shapes: tuple
    seconds: float
    flops: float | None = None
    bytes: float | None = None
    dtype: str | None = None
    formula: str = ""  # the key of FORMULAS used, "" for an unknown operator
    on: str = "cpu"  # "cpu": the operator's duration; "gpu": its kernels' durations
    bound: str | None = None  # "compute" / "memory" against the roofs, None without them

    @property
    def flops_per_s(self) -> float | None:
        """FLOPs / seconds (None when the FLOPs are unknown or the time is 0)."""
        return None if self.flops is None or not self.seconds else self.flops / self.seconds

    @property
    def bytes_per_s(self) -> float | None:
        """bytes / seconds (None when the bytes are unknown or the time is 0)."""
        return None if self.bytes is None or not self.seconds else self.bytes / self.seconds

    @property
    def intensity(self) -> float | None:
        """FLOPs per byte (None when a count is unknown or the bytes are 0)."""
        return None if self.flops is None or not self.bytes else self.flops / self.bytes


@dataclass
class TracePlacement:
    """The operators of a trace: `rows` with a formula, `unknown` without (time only)."""

    rows: list[TraceRow]
    unknown: list[TraceRow]
    device: str = ""
    chip: Any = None
    notes: list[str] = field(default_factory=list)

    def __iter__(self):
        return iter(self.rows + self.unknown)

    def __len__(self) -> int:
        return len(self.rows) + len(self.unknown)

    def table(self, top: int = 12) -> str:
        """The `top` slowest known operators, then the unknown ones' names and total time."""
        from .units import format_flops_rate, format_intensity, format_time

        lines = [f"{'operator':<28} {'time':>9} {'FLOP/s':>14} {'intensity':>15} bound"]
        for row in sorted(self.rows, key=lambda r: -r.seconds)[:top]:
            rate = "-" if row.flops_per_s is None else format_flops_rate(row.flops_per_s)
            ai = "-" if row.intensity is None else format_intensity(row.intensity)
            lines.append(
                f"{row.name[:28]:<28} {format_time(row.seconds):>9} {rate:>14} {ai:>15} "
                f"{row.bound or '-'}"
            )
        if self.unknown:
            total = sum(r.seconds for r in self.unknown)
            names = sorted({r.name for r in self.unknown})
            lines.append(
                f"no formula for {len(self.unknown)} operator{'s' if len(self.unknown) > 1 else ''} "
                f"({format_time(total)}): " + ", ".join(names)
            )
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.table()

    def points(self):
        """The known operators with a positive rate and intensity as `roofline.plots.Point`s."""
        from .plots import Point

        return [
            Point(f"{r.name} {_shape_text(r.shapes)}", r.intensity, r.flops_per_s)
            for r in self.rows
            if r.intensity and r.flops_per_s
        ]

    def plot(self, roofs=None, dtype=None, **kwargs):
        """The operators on the roofline of `roofs` (default: the trace's device, if known)."""
        from .placement import roofs_for
        from .plots import roofline_figure

        chip = roofs_for(roofs, self.device)[0] if roofs is not None else self.chip
        if chip is None:
            raise ValueError(
                f"no roofs for device {self.device!r}: pass roofs= a Chip or a catalog name"
            )
        dtypes = [r.dtype for r in self.rows if r.dtype and chip.has_peak(r.dtype)]
        dtype = dtype or (dtypes[0] if dtypes else chip.main_dtype)
        return roofline_figure(chip, dtype, operations=self.points(), **kwargs)


def _shape_text(shapes) -> str:
    return "x".join("[" + ",".join(str(n) for n in s) + "]" for s in shapes if s)


# ---------------------------------------------------------------- formulas


def _tensors(args: dict):
    """(shape, dtype, bytes per element) of each tensor input (scalars and None skipped)."""
    dims = args.get("Input Dims") or []
    types = args.get("Input type") or [""] * len(dims)
    out = []
    for shape, kind in zip(dims, types):
        if not isinstance(shape, list) or kind in ("", "Scalar", "ScalarList", "GenericList"):
            continue
        if shape and isinstance(shape[0], list):  # a list of tensors (aten::cat): skip
            continue
        dtype, size = TORCH_TYPES.get(kind, (None, 4))
        out.append((tuple(int(n) for n in shape), dtype, size))
    return out


def _numel(shape) -> int:
    return math.prod(shape) if shape else 1


def _broadcast(shapes):
    rank = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    return tuple(max(dims) for dims in zip(*padded)) if padded else ()


def _matmul_counts(name, tensors):
    """(FLOPs, bytes) of a matmul-like operator from its input shapes."""
    if name == "aten::addmm" or name == "aten::baddbmm":
        bias, a, b = tensors[:3]
    elif name == "aten::linear":
        a, w = tensors[:2]
        bias = tensors[2] if len(tensors) > 2 else None
        b = ((w[0][1], w[0][0]), w[1], w[2])  # W is [F, D]: the product uses W^T
    else:
        (a, b), bias = tensors[:2], None
    *batch_a, m, k = a[0] if len(a[0]) >= 2 else (1, a[0][0])
    n = b[0][-1] if len(b[0]) >= 2 else 1
    batch = _broadcast([tuple(batch_a), tuple(b[0][:-2])])
    rows = _numel(batch) * m
    flops = 2 * rows * k * n
    out_bytes = rows * n * a[2]
    moved = _numel(a[0]) * a[2] + _numel(b[0]) * b[2] + out_bytes
    if bias is not None:
        moved += _numel(bias[0]) * bias[2]
    return flops, moved


def _attention_counts(name, tensors, args):
    """Fused attention from Q [.., H, T_q, d_h] and K [.., H_kv, T, d_h]; halved when the
    trace records is_causal=True (at the operator's own input position, IS_CAUSAL_INPUT)."""
    from .transformer import fused_attention

    (q, dtype, _), (k, _, _) = tensors[0], tensors[1]
    *lead, t_q, d_h = q
    B = _numel(lead[:-1])
    H = lead[-1] if lead else 1
    H_kv = k[-3] if len(k) >= 3 else 1
    cost = fused_attention(B, t_q, k[-2], H, H_kv, d_h, dtype)
    concrete = args.get("Concrete Inputs") or []
    at = IS_CAUSAL_INPUT[name]
    causal = len(concrete) > at and str(concrete[at]).lower() == "true"
    return cost.flops / (2 if causal else 1), cost.bytes


def formula_for(name: str) -> str:
    """The key of FORMULAS that covers operator `name`, or "" when none does."""
    for key, names in (
        ("matmul", MATMULS),
        ("elementwise", ELEMENTWISE),
        ("softmax", SOFTMAX),
        ("layer norm", LAYER_NORM),
        ("attention", ATTENTION),
    ):
        if name in names:
            return key
    return ""


def counts_for(name: str, args: dict):
    """(FLOPs, bytes, dtype) of operator `name` from its recorded inputs; (None, None, dtype)
    when it has no formula or no recorded shapes."""
    tensors = _tensors(args)
    dtype = next((t[1] for t in tensors if t[1]), None)
    kind = formula_for(name)
    if not kind or not tensors or (kind == "attention" and (dtype is None or len(tensors) < 3)):
        return None, None, dtype
    if kind == "matmul":
        flops, moved = _matmul_counts(name, tensors)
    elif kind == "attention":
        flops, moved = _attention_counts(name, tensors, args)
    else:
        out = _broadcast([t[0] for t in tensors]) if kind == "elementwise" else tensors[0][0]
        n_out = _numel(out)
        size = tensors[0][2]
        per = {"elementwise": 1, "softmax": SOFTMAX_FLOPS_PER_ELEMENT}.get(
            kind, LAYER_NORM_FLOPS_PER_ELEMENT
        )
        flops = per * n_out
        moved = sum(_numel(t[0]) * t[2] for t in tensors) + n_out * size
    return float(flops), float(moved), dtype


# ---------------------------------------------------------------- reading a trace


def _load(path_or_dict) -> dict:
    if isinstance(path_or_dict, dict):
        return path_or_dict
    path = Path(path_or_dict)
    if not path.is_file():
        raise FileNotFoundError(
            f"no trace at {path}: export one with prof.export_chrome_trace(path) after "
            "torch.profiler.profile(record_shapes=True)"
        )
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _events(trace: dict):
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        raise ValueError(
            "not a Chrome trace: expected a dict with a 'traceEvents' list, as "
            "torch.profiler's export_chrome_trace writes"
        )
    return [e for e in events if isinstance(e, dict) and e.get("ph") == "X"]


def _parents(ops) -> dict:
    """id(op) -> its enclosing operator on the same thread (None at the top)."""
    parent: dict = {}
    threads: dict = {}
    for op in ops:
        threads.setdefault((op.get("pid"), op.get("tid")), []).append(op)
    for thread_ops in threads.values():
        stack: list = []
        for op in sorted(thread_ops, key=lambda e: (e.get("ts", 0), -e.get("dur", 0))):
            start = op.get("ts", 0)
            while stack and stack[-1].get("ts", 0) + stack[-1].get("dur", 0) <= start:
                stack.pop()
            parent[id(op)] = stack[-1] if stack else None
            stack.append(op)
    return parent


def _kernel_seconds(events, ops) -> dict:
    """id(op) -> seconds of the GPU kernels it launched itself (External id / correlation)."""
    by_external = {op.get("args", {}).get("External id"): op for op in ops}
    runtime_external = {
        e["args"]["correlation"]: e["args"].get("External id")
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})
    }
    seconds: dict = {}
    for kernel in (e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")):
        args = kernel.get("args", {})
        external = args.get("External id")
        if external is None:
            external = runtime_external.get(args.get("correlation"))
        op = by_external.get(external)
        if op is not None:
            seconds[id(op)] = seconds.get(id(op), 0.0) + kernel.get("dur", 0) / 1e6
    return seconds


def _device(trace: dict) -> str:
    props = trace.get("deviceProperties") or []
    if props and isinstance(props[0], dict) and props[0].get("name"):
        return str(props[0]["name"])
    return "cpu"


def _subtree_gpu_seconds(ops, parent, kernels) -> dict:
    """id(op) -> seconds of the kernels launched by it and every operator inside it."""
    total: dict = {}
    for op in ops:
        own = kernels.get(id(op))
        node = op
        while own and node is not None:
            total[id(node)] = total.get(id(node), 0.0) + own
            node = parent.get(id(node))
    return total


def _ancestors(op, parent):
    node = parent.get(id(op))
    while node is not None:
        yield node
        node = parent.get(id(node))


def _classify(ops, parent):
    """(operators with a formula and no known ancestor, outermost unknown operators that hold
    no known one)."""
    known = {id(op) for op in ops if formula_for(op.get("name", ""))}
    holds_known = set()
    for op in ops:
        if id(op) in known:
            holds_known.update(id(a) for a in _ancestors(op, parent))
    roots, unknown = [], []
    for op in ops:
        if any(id(a) in known for a in _ancestors(op, parent)):
            continue
        if id(op) in known:
            roots.append(op)
        elif id(op) not in holds_known:
            up = parent.get(id(op))
            if up is None or id(up) in holds_known:
                unknown.append(op)
    return roots, unknown


def _bound(intensity, dtype, chip):
    if chip is None or intensity is None or not dtype or not chip.has_peak(dtype):
        return None
    ridge = chip.peak_flops_per_s(dtype) / chip.hbm_bytes_per_s
    return "compute" if intensity >= ridge else "memory"


def place_trace(path_or_dict, roofs=None) -> TracePlacement:
    """Each operator of a PyTorch profiler trace with its FLOPs, bytes and time.

    path_or_dict: the JSON file ``prof.export_chrome_trace(path)`` wrote (record_shapes=True),
    or the dict loaded from it. roofs: as for `roofline.place` (default: the catalog chip
    named in the trace's ``deviceProperties``, for a GPU trace).
    """
    from .placement import roofs_for

    trace = _load(path_or_dict)
    events = _events(trace)
    ops = [e for e in events if e.get("cat") in ("cpu_op", "operator")]
    parent = _parents(ops)
    kernels = _kernel_seconds(events, ops)
    on = "gpu" if kernels else "cpu"
    gpu = _subtree_gpu_seconds(ops, parent, kernels)
    device = _device(trace)
    chip = roofs_for(roofs, device)[0]
    roots, unknown = _classify(ops, parent)

    cache: dict = {}  # the same operator on the same shapes recurs in every layer and step

    def row(op) -> TraceRow:
        args = op.get("args") or {}
        name = op.get("name", "")
        key = (
            name,
            repr(args.get("Input Dims")),
            repr(args.get("Input type")),
            repr(args.get("Concrete Inputs", "")),
        )
        if key not in cache:
            flops, moved, dtype = counts_for(name, args)
            intensity = flops / moved if flops is not None and moved else None
            shapes = tuple(t[0] for t in _tensors(args))
            formula = formula_for(name) if flops is not None else ""
            cache[key] = (flops, moved, dtype, shapes, formula, _bound(intensity, dtype, chip))
        flops, moved, dtype, shapes, formula, bound = cache[key]
        seconds = gpu.get(id(op), 0.0) if on == "gpu" else op.get("dur", 0) / 1e6
        return TraceRow(name, shapes, seconds, flops, moved, dtype, formula, on, bound)

    rows = [row(op) for op in roots]
    missing = [r for r in rows if r.flops is None]  # a known name without recorded shapes
    rows = [r for r in rows if r.flops is not None]
    notes = [
        "time: GPU kernels joined to operators by External id / correlation"
        if on == "gpu"
        else "time: each CPU operator's duration (dispatch overhead included)"
    ]
    if missing:
        notes.append(
            f"{len(missing)} known operators had no recorded shapes: profile with "
            "record_shapes=True"
        )
    if any(r.formula == "attention" for r in rows):
        notes.append("attention: causal halving applied only where the trace records is_causal")
    return TracePlacement(rows, missing + [row(op) for op in unknown], device, chip, notes)
