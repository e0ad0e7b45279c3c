"""Number formats: their names and how many bytes one element takes."""

from __future__ import annotations

import difflib

__all__ = ["DTYPE_BYTES", "MATH_DTYPE", "canonical_dtype", "bytes_per_element"]

#: Bytes per element of each number format the book uses.
DTYPE_BYTES = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,  # stored as fp32; only the tensor cores read 19 of its bits
    "bf16": 2,
    "fp16": 2,
    "fp8": 1,
    "int8": 1,
    "fp4": 0.5,  # the 4-bit values alone; a block-scaled format adds its scales:
    "nvfp4": 0.5 + 1 / 16,  # 4 bits + one 8-bit (e4m3) scale per 16 elements = 0.5625 B
    "mxfp4": 0.5 + 1 / 32,  # 4 bits + one 8-bit (e8m0) scale per 32 elements = 0.53125 B
    "int4": 0.5,
}

#: Formats whose arithmetic runs at another format's peak: the block scales of NVFP4 and MXFP4
#: change the bytes, not the tensor cores' fp4 rate.
MATH_DTYPE = {"nvfp4": "fp4", "mxfp4": "fp4"}

_ALIASES = {
    "float64": "fp64",
    "double": "fp64",
    "f64": "fp64",
    "float32": "fp32",
    "float": "fp32",
    "single": "fp32",
    "f32": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "f16": "fp16",
    "float8": "fp8",
    "e4m3": "fp8",
    "e5m2": "fp8",
    "float8_e4m3fn": "fp8",
    "float8_e5m2": "fp8",
    "float4": "fp4",
    "i8": "int8",
    "i4": "int4",
}


def canonical_dtype(dtype) -> str:
    """The book's name for a number format ("bfloat16" -> "bf16").

    Raises ValueError for an unknown name, listing the known ones.
    """
    if not isinstance(dtype, str):
        name = getattr(dtype, "name", None)  # numpy dtypes and scalar types
        if name is None and isinstance(dtype, type):
            name = dtype.__name__
        if not isinstance(name, str):
            raise TypeError(f"dtype must be a name such as 'bf16' or 'fp32', got {dtype!r}")
        dtype = name
    key = dtype.strip().lower().replace("-", "").replace("_", "").replace(" ", "")
    for name in DTYPE_BYTES:
        if key == name:
            return name
    for alias, name in _ALIASES.items():
        if key == alias.replace("_", ""):
            return name
    close = difflib.get_close_matches(key, list(DTYPE_BYTES) + list(_ALIASES), n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise ValueError(f"unknown dtype {dtype!r}; known dtypes are {', '.join(DTYPE_BYTES)}.{hint}")


def bytes_per_element(dtype) -> float:
    """Bytes one element of `dtype` takes in memory: bytes_per_element("bf16") -> 2."""
    return DTYPE_BYTES[canonical_dtype(dtype)]
