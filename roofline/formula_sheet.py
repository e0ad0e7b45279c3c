"""The formula sheet: every formula of the book with its chapter and the package function that
computes it, in one list (`FORMULAS`), from which `formula_sheet.md` is written.

    python -m roofline.formula_sheet            # rewrite formula_sheet.md from FORMULAS
    python -m roofline.formula_sheet --check    # exit 1 if formula_sheet.md differs

A formula with `rhs` is a sympy expression (Python syntax, the names of `SYMBOLS`): the sheet
prints sympy's LaTeX of that very expression, and the tests evaluate it against the package
function on numbers derived by hand, so the printed formula and the code cannot drift apart.
A formula that an expression cannot say (a max, an inequality, a floor) gives its right-hand
side as LaTeX (`latex`) and is tied to the package by the function's name only.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Formula", "FORMULAS", "SYMBOLS", "latex", "expression", "page", "main"]

#: name in `rhs` -> its LaTeX on the sheet (the book's notation, intro.md's table)
SYMBOLS = {
    "FLOPs": r"\text{FLOPs}",
    "nbytes": r"\text{bytes}",
    "P": "P",
    "P_sparse": r"P_{\text{sparse}}",
    "BW_mem": r"\mathrm{BW}_{\text{mem}}",
    "BW_link": r"\mathrm{BW}_{\text{link}}",
    "T_math": r"T_{\text{math}}",
    "T_comms": r"T_{\text{comms}}",
    "I_star": r"I^{*}",
    "B": "B",
    "D": "D",
    "F": "F",
    "N": "N",
    "n": "n",
    "V": "V",
    "alpha": r"\alpha",
    "L": "L",
    "H": "H",
    "H_kv": r"H_{kv}",
    "d_h": "d_h",
    "T": "T",
    "w": "w",
    "Psi": r"\Psi",
    "R": "R",
    "M": "M",
    "n_pp": r"n_{\text{pp}}",
    "n_tp": r"n_{\text{tp}}",
    "m_W": r"m_{\mathbf{W}}",
    "m_seq": r"m_{\text{seq}}",
    "f_seq": r"f_{\text{seq}}",
    "m_weights": r"m_{\text{weights}}",
    "m_kv": r"m_{\text{kv}}",
    "Psi_matmul": r"\Psi_{\text{matmul}}",
    "s": "s",
    "b": "b",
}


@dataclass(frozen=True)
class Formula:
    """One line of the sheet. `chapter`: the doc that derives it (e.g.
    "chapters/02_arithmetic_intensity"); `function`: the dotted path of the package function
    (or method) that computes it; `rhs`: a sympy expression in `SYMBOLS`' names, or `latex`:
    the right-hand side by hand; `unit`: the unit of the result, in words."""

    what: str
    lhs: str
    chapter: str
    function: str
    rhs: str = ""
    latex: str = ""
    unit: str = ""


def _ch(number: int) -> str:
    names = {
        1: "01_where_does_the_time_go",
        2: "02_arithmetic_intensity",
        3: "03_the_roofline_plot",
        4: "04_matmul_critical_batch",
        5: "05_reading_a_spec_sheet",
        6: "06_communication_rooflines",
        7: "07_transformer_layer",
        10: "10_training_step",
        11: "11_spreading_a_model",
        12: "12_serving_a_model",
    }
    return f"chapters/{names[number]}"


FORMULAS: tuple[Formula, ...] = (
    Formula(
        "time of the math", r"T_{\text{math}}", _ch(1), "roofline.estimate", "FLOPs/P", unit="s"
    ),
    Formula(
        "time of the bytes (memory)",
        r"T_{\text{comms}}",
        _ch(1),
        "roofline.estimate",
        "nbytes/BW_mem",
        unit="s",
    ),
    Formula(
        "lower bound (math and bytes overlapped)",
        r"T_{\text{lower}}",
        _ch(1),
        "roofline.Estimate.t_lower",
        latex=r"\max(T_{\text{math}},\ T_{\text{comms}})",
        unit="s",
    ),
    Formula(
        "upper bound (no overlap)",
        r"T_{\text{upper}}",
        _ch(1),
        "roofline.Estimate.t_upper",
        "T_math + T_comms",
        unit="s",
    ),
    Formula(
        "arithmetic intensity",
        "I",
        _ch(2),
        "roofline.costs.Cost.intensity",
        "FLOPs/nbytes",
        unit="FLOPs/byte",
    ),
    Formula(
        "critical intensity (ridge point)",
        r"I^{*}",
        _ch(2),
        "roofline.critical_intensity",
        "P/BW_mem",
        unit="FLOPs/byte",
    ),
    Formula(
        "dot product of two bf16 vectors of N",
        "I",
        _ch(2),
        "roofline.costs.dot",
        "(2*N - 1)/(2*(2*N + 1))",
        unit="FLOPs/byte",
    ),
    Formula(
        "attainable FLOP/s at intensity I",
        r"\text{attainable}",
        _ch(3),
        "roofline.attainable_flops_per_s",
        latex=r"\min(P,\ \mathrm{BW}_{\text{mem}} \cdot I)",
        unit="FLOP/s",
    ),
    Formula(
        "matmul [B, D] x [D, F], FLOPs", r"\text{FLOPs}", _ch(4), "roofline.costs.matmul", "2*B*D*F"
    ),
    Formula(
        "matmul in bf16, bytes: read X and W, write Y",
        r"\text{bytes}",
        _ch(4),
        "roofline.costs.matmul",
        "2*(B*D + D*F + B*F)",
        unit="bytes",
    ),
    Formula(
        "matmul in bf16, intensity",
        "I",
        _ch(4),
        "roofline.costs.matmul",
        "B*D*F/(B*D + D*F + B*F)",
        unit="FLOPs/byte",
    ),
    Formula(
        "critical batch size, bf16, B much smaller than D, F",
        r"B_{\text{crit}}",
        _ch(4),
        "roofline.critical_batch_size",
        "I_star",
        unit="tokens",
    ),
    Formula(
        "critical batch size, exact (bf16)",
        r"B_{\text{crit}}",
        _ch(4),
        "roofline.exact_critical_batch_size",
        "I_star*D*F/(D*F - I_star*(D + F))",
        unit="tokens",
    ),
    Formula(
        "dense peak from a 2:4-sparse figure",
        r"P_{\text{dense}}",
        _ch(5),
        "roofline.hardware.Chip.peak_flops_per_s",
        "P_sparse/2",
        unit="FLOP/s",
    ),
    Formula(
        "two chips split D: math equals the link (bf16)",
        "D",
        _ch(6),
        "roofline.sharded_critical_D",
        "2*P/BW_link",
        unit="elements",
    ),
    Formula(
        "ring all-gather or reduce-scatter of V bytes over n chips",
        "T",
        _ch(6),
        "roofline.collectives.collective_time",
        "(n - 1)*alpha + (n - 1)/n*V/BW_link",
        unit="s",
    ),
    Formula(
        "ring all-reduce (reduce-scatter, then all-gather)",
        "T",
        _ch(6),
        "roofline.collectives.collective_time",
        "2*(n - 1)*alpha + 2*(n - 1)/n*V/BW_link",
        unit="s",
    ),
    Formula(
        "KV cache per token (w bytes per number)",
        r"\text{bytes}",
        _ch(7),
        "roofline.transformer.kv_cache_bytes",
        "2*L*H_kv*d_h*w",
        unit="bytes",
    ),
    Formula(
        "decode batch where a layer turns compute-bound",
        r"B^{*}",
        _ch(7),
        "roofline.transformer.decode_critical_batch",
        "I_star*m_W/(f_seq - I_star*m_seq)",
        unit="sequences",
    ),
    Formula(
        "training FLOPs per token",
        r"\text{FLOPs}",
        _ch(10),
        "roofline.training_flops_per_token",
        "6*Psi + 12*L*H*d_h*T",
    ),
    Formula(
        "training FLOPs per token, full recomputation",
        r"\text{FLOPs}",
        _ch(10),
        "roofline.training_flops_per_token",
        "8*Psi",
    ),
    Formula(
        "weights, gradients and Adam state per parameter",
        r"\text{bytes}",
        _ch(10),
        "roofline.training_state_bytes",
        "2 + 2 + 12",
        unit="bytes",
    ),
    Formula(
        "activations a layer keeps, b sequences of s tokens (fused attention)",
        r"\text{bytes}",
        _ch(10),
        "roofline.training.activation_bytes_per_layer",
        "34*s*b*D",
        unit="bytes",
    ),
    Formula(
        "Adam per parameter and step: reads fp32 master, 2 moments, bf16 gradient; writes "
        "master, moments, bf16 weight",
        r"\text{bytes}",
        _ch(10),
        "roofline.training_step",
        "14 + 14",
        unit="bytes",
    ),
    Formula(
        "model FLOPs utilisation at R tokens/s on n chips",
        r"\mathrm{MFU}",
        _ch(10),
        "roofline.mfu",
        "(6*Psi + 12*L*H*d_h*T)*R/(n*P)",
    ),
    Formula(
        "data parallelism hides its all-reduce when",
        r"\frac{B}{n}",
        _ch(11),
        "roofline.training_step",
        latex=r"> \frac{n-1}{n}\cdot\frac{P}{\mathrm{BW}}",
        unit="tokens per replica",
    ),
    Formula(
        "tensor parallelism hides its all-reduces when",
        "F",
        _ch(11),
        "roofline.collectives.megatron_mlp_times",
        latex=r"> \frac{2}{3}\,(n_{\text{tp}}-1)\,\frac{P}{\mathrm{BW}}",
    ),
    Formula(
        "pipeline bubble, share of the step (1F1B, M micro-batches)",
        r"\text{bubble}",
        _ch(11),
        "roofline.training_step",
        "(n_pp - 1)/(M + n_pp - 1)",
    ),
    Formula(
        "decode step",
        r"T_{\text{step}}",
        _ch(12),
        "roofline.serving_estimate",
        latex=r"\max\!\Big(T_{\text{math}},\ "
        r"\frac{m_{\text{weights}} + B\,T\,m_{\text{kv}}}{\mathrm{BW}_{\text{mem}}},\ "
        r"T_{\text{all-reduces}}\Big)",
        unit="s",
    ),
    Formula(
        "decode batch where the step turns compute-bound",
        "B",
        _ch(12),
        "roofline.serving.compute_bound_batch",
        "(m_weights/BW_mem)/(2*Psi_matmul/P - T*m_kv/BW_mem)",
        unit="sequences",
    ),
)


def _symbols() -> dict:
    import sympy

    return {name: sympy.Symbol(name, positive=True) for name in SYMBOLS}


def expression(formula: Formula):
    """The formula's right-hand side as a sympy expression (None for a hand-written one)."""
    if not formula.rhs:
        return None
    from sympy.parsing.sympy_parser import parse_expr

    return parse_expr(formula.rhs, local_dict=_symbols(), evaluate=False)


def latex(formula: Formula) -> str:
    """The whole formula in LaTeX: `lhs = rhs` from the expression, or `lhs latex`."""
    import sympy

    if formula.rhs:
        names = {s: SYMBOLS[s.name] for s in _symbols().values()}
        rhs = sympy.latex(expression(formula), symbol_names=names, order="none")
        return f"{formula.lhs} = {rhs}"
    joined = (
        formula.latex if formula.latex.lstrip().startswith((">", "<")) else ("= " + formula.latex)
    )
    return f"{formula.lhs} {joined}"


PAGE = Path(__file__).resolve().parent.parent / "formula_sheet.md"

_HEAD = """\
# Formula sheet

<!-- Written by `python -m roofline.formula_sheet` from roofline/formula_sheet.py: edit that
list, not this file (a test fails when the two differ). -->

Every formula of the book on one page, with the chapter that derives it and the function of the
`roofline` package that computes it (`rl.` is `import roofline as rl`). The letters are those of
the notation table in {doc}`intro`: $P$ a chip's dense peak FLOP/s in the dtype the math runs in,
$\\mathrm{BW}_{\\text{mem}}$ its memory bandwidth, $\\mathrm{BW}_{\\text{link}}$ one link's
bandwidth one way, $\\mathrm{BW}$ a chip's one-way bandwidth into a collective (all its links
through a switch, the total bandwidth $\\mathrm{BW}_{\\text{total}}$; one link on a torus
axis), $B, D, F$ a matmul's sizes, $\\Psi$ a model's parameters, $L$ its layers, $H$
its query heads of $d_h$ numbers, $H_{kv}$ its key/value heads, $T$ a context in tokens, $n$ a
number of chips, $w$ bytes per number. Unless a line says otherwise: times are lower bounds at
the datasheet peaks, a matmul counts 2 FLOPs per multiply-add, bytes are bf16 (2 per number), and
a link's bandwidth is one way.

:::{container} formula-sheet

| Formula | What it gives | Chapter | Computed by |
| --- | --- | --- | --- |
"""


def _row(formula: Formula) -> str:
    number = int(formula.chapter.split("/")[-1].split("_")[0])
    unit = f" ({formula.unit})" if formula.unit else ""
    short = formula.function.replace("roofline.", "rl.", 1)
    return (
        f"| ${latex(formula)}$ | {formula.what}{unit} | "
        f"{{doc}}`{number} <{formula.chapter}>` | `{short}` |"
    )


def page() -> str:
    """The text of formula_sheet.md."""
    return _HEAD + "\n".join(_row(f) for f in FORMULAS) + "\n\n:::\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--check" in argv:
        same = PAGE.exists() and PAGE.read_text(encoding="utf-8") == page()
        print(
            f"{PAGE.name} is {'up to date' if same else 'out of date: run python -m roofline.formula_sheet'}"
        )
        return 0 if same else 1
    PAGE.write_text(page(), encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
