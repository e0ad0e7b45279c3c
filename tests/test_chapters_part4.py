"""Claims of Part 4: chapter 10 (a training step) and chapter 11 (spreading a model).

Expected values are derived by hand from the papers' own figures and formulas (PaLM's Table 3
and section 4.1; Megatron's column/row pairing; the pipeline schedule played step by step),
never read back from the code under test.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import sympy

import roofline as rl
from roofline.exercises import check, get_exercise

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = {
    10: ROOT / "chapters" / "10_training_step.md",
    11: ROOT / "chapters" / "11_spreading_a_model.md",
}


def _cells(path):
    import jupytext

    return [c.source for c in jupytext.read(path).cells if c.cell_type == "code"]


def _chapter_functions(path, names):
    """The chapter's own definitions of the functions `names` (only the `def`s are run)."""
    import ast

    namespace = {"rl": rl, "sympy": sympy}
    for source in _cells(path):
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef) and node.name in names:
                module = ast.Module(body=[node], type_ignores=[])
                exec(compile(module, str(path), "exec"), namespace)
    return {name: namespace[name] for name in names}


# ------------------------------------------------------------------ the table of contents


def test_part_4_follows_part_3_and_precedes_the_homework():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    order = [
        toc.index("chapters/09_measuring_a_roofline"),
        toc.index("Part 4"),
        toc.index("chapters/10_training_step"),
        toc.index("chapters/11_spreading_a_model"),
        toc.index("exercises/homework_part1"),
    ]
    assert order == sorted(order)


def test_notation_table_lists_the_new_symbols():
    intro = (ROOT / "intro.md").read_text(encoding="utf-8")
    symbols = [line.split("|")[1].strip() for line in intro.splitlines() if line.startswith("| $")]
    for wanted in (r"$\Psi$", "$L$", "$R$", "$M$"):
        assert wanted in symbols, wanted
    assert any(r"n_{\text{pp}}" in s for s in symbols)


def test_new_glossary_terms_exist_and_are_linked_from_part_4():
    glossary = (ROOT / "glossary.md").read_text(encoding="utf-8")
    pages = "".join(p.read_text(encoding="utf-8") for p in CHAPTERS.values())
    for term in (
        "training step",
        "backward pass",
        "optimizer state",
        "recomputation",
        "MFU",
        "HFU",
        "data parallelism",
        "fully sharded data parallelism",
        "tensor parallelism",
        "pipeline parallelism",
        "expert parallelism",
        "micro-batch",
        "bubble",
    ):
        assert re.search(rf"^{re.escape(term)}$", glossary, re.M), term
        assert re.search(rf"\{{term\}}`({re.escape(term)}|[^`]*<{re.escape(term)}>)`", pages), term


# ------------------------------------------------------------------ exercises


@pytest.mark.parametrize("number", sorted(CHAPTERS))
def test_each_chapter_has_four_checked_exercises_with_solutions(number):
    text = CHAPTERS[number].read_text(encoding="utf-8")
    labels = re.findall(r"```\{exercise\}[^\n]*\n:label: ([a-z0-9-]+)", text)
    assert len(labels) >= 4
    ids = re.findall(r'check\("([a-z0-9-]+)", answer\)', text)
    assert len(set(ids)) >= 4
    for label in labels:
        assert f"```{{solution-start}} {label}\n:class: dropdown" in text
    for exercise_id in set(ids):
        exercise = get_exercise(exercise_id)
        assert check(exercise_id, None).correct is False
        expected = exercise.expected()
        typed = expected if exercise.kind in ("symbolic", "choice") else float(expected)
        assert check(exercise_id, typed if not isinstance(typed, sympy.Basic) else str(typed))


def test_part_4_exercises_match_hand_derivations():
    # A100: 163 TFLOP/s of hardware FLOPs at 8 Psi per token -> model FLOPs x 6/8 over 312
    assert check("training-hfu-to-mfu-a100", 0.75 * 163 / 312).correct
    assert check("training-hfu-to-mfu-a100", "39.2 %").correct
    assert not check("training-hfu-to-mfu-a100", 163 / 312).correct
    # 16 stages, 1536 / 8 = 192 micro-batches: 15 / 207
    assert check("parallel-bubble-16-stages", 15 / 207).correct
    assert not check("parallel-bubble-16-stages", 15 / 192).correct
    # B200 (2250 TFLOP/s bf16 dense, 18 x 50 GB/s one way): the backward (4 Psi per token)
    # against the all-reduce: 7/8 x 2250e12 / 900e9 = 2187.5; the whole step's 6 Psi is wrong
    assert check("parallel-dp-tokens-b200", 7 / 8 * 2250e12 / 900e9).correct
    assert not check("parallel-dp-tokens-b200", 2 / 3 * 7 / 8 * 2250e12 / 900e9).correct
    # MI300X mesh: F* = 2/3 x 1307.4e12 / 64e9, whatever n
    assert check("parallel-tp-critical-f-mi300x", 2 / 3 * 1307.4e12 / 64e9).correct
    # experts over 64 H100s on 8 nodes, all-to-alls through the NICs (50 GB/s one way per GPU,
    # NVIDIA's ConnectX-7 at 400 Gb/s): 18 D F / P > 4 x 63/64 x 2 D / 50e9 ->
    # F > 4/9 x 63/64 x 989.5e12 / 50e9 = 8658; on NVLink inside one node (8 GPUs, 18 x 25 GB/s)
    # it would be 4/9 x 7/8 x 989.5e12 / 450e9 = 855
    assert check("parallel-ep-network-h100", 4 / 9 * 63 / 64 * 989.5e12 / 50e9).correct
    assert not check("parallel-ep-network-h100", 4 / 9 * 7 / 8 * 989.5e12 / 450e9).correct
    assert check("parallel-fsdp-ring-symbolic", "P*(n-1)/(n*W)").correct
    # gated MLP of width 3D: Psi = L (4 D^2 + 3 x 3 D^2) = 13 L D^2, so 12 L D T / (6 x 13 L D^2)
    assert check("training-attention-ratio-gated", "2*T/(13*D)").correct
    assert check("training-attention-ratio-gated", "T/(6.5*D)").correct
    assert not check("training-attention-ratio-gated", "T/(6*D)").correct


# ------------------------------------------------------------------ chapter 10


def test_palm_mfu_from_the_papers_own_figures():
    """PaLM (arXiv 2204.02311): 540.35e9 parameters, 118 layers, 48 heads x 256, sequences of
    2048, 238.3K tokens/s on 6144 TPU v4 at 275 TFLOP/s: MFU 46.2 % (45.7 % without attention)."""
    per_token = 6 * 540.35e9 + 12 * 118 * 48 * 256 * 2048
    by_hand = per_token * 238.3e3 / (6144 * 275e12)
    assert round(by_hand * 100, 1) == 46.2
    assert round(6 * 540.35e9 * 238.3e3 / (6144 * 275e12) * 100, 1) == 45.7
    assert rl.mfu("PaLM 540B", 238.3e3, "TPU v4", 6144, 2048) == pytest.approx(by_hand, rel=1e-3)
    text = CHAPTERS[10].read_text(encoding="utf-8")
    assert "{glue:text}`ch10_palm_mfu`" in text and "rl.mfu(palm" in text


def test_attention_share_rule_of_thumb():
    """12 L D T against 6 x 12 L D^2: T / (6D); the chapter's sympy cell prints it."""
    L, D, T = sympy.symbols("L D T", positive=True)
    assert sympy.simplify(12 * L * D * T / (6 * 12 * L * D**2) - T / (6 * D)) == 0
    assert any(
        "ratio = sympy.simplify(12 * L * D * T / (6 * psi_approx))" in c
        for c in _cells(CHAPTERS[10])
    )


# ------------------------------------------------------------------ chapter 11

H100_ALL_LINKS = 18 * 25e9  # NVLink 4: 18 links of 25 GB/s one way, through NVSwitch
H100_PEAK = 989.5e12  # bf16 dense, NVIDIA's H100 SXM datasheet (989.4 rounded up by the catalog)


def test_data_parallel_threshold_for_eight_h100s():
    f = _chapter_functions(CHAPTERS[11], ["collective_s", "dp_tokens_per_replica"])
    # the all-reduce hides behind the backward only (4 psi per token, chapter 4):
    # 2 (7/8) 2 psi / W_all = 4 psi b / P  ->  b = 7/8 P / W_all, about 1924 tokens
    by_hand = 7 / 8 * H100_PEAK / H100_ALL_LINKS
    assert f["dp_tokens_per_replica"]("H100 SXM", 8) == pytest.approx(by_hand, rel=1e-3)
    # 16 TPU v5p chips are Google's 2x2x4 slice (no wraparound: one link on each of the three
    # axes, 3W into a chip): all-reduce 2 (15/16) V / 3W with W = 90 GB/s one way, V = 2 psi;
    # tokens = t P / (4 psi) = 1/3 (15/16) P / W = 1593.75
    by_hand_v5p = 1 / 3 * 15 / 16 * 459e12 / 90e9
    assert f["dp_tokens_per_replica"]("TPU v5p", 16) == pytest.approx(by_hand_v5p, rel=1e-3)


def test_tensor_parallel_threshold_for_eight_h100s():
    f = _chapter_functions(CHAPTERS[11], ["collective_s", "tp_critical_F"])
    # two all-reduces of 2BD bytes vs 12 B D F / n: F* = 2/3 (n - 1) P / W on a switch
    by_hand = 2 / 3 * 7 * H100_PEAK / H100_ALL_LINKS  # about 10 261
    assert f["tp_critical_F"]("H100 SXM", 8) == pytest.approx(by_hand, rel=1e-3)
    assert 28672 > by_hand > 0  # Llama 3 70B's F passes


def test_expert_parallel_threshold_for_eight_h100s():
    f = _chapter_functions(CHAPTERS[11], ["collective_s", "ep_critical_F"])
    by_hand = 4 / 9 * 7 / 8 * H100_PEAK / H100_ALL_LINKS
    assert f["ep_critical_F"]("H100 SXM", 8) == pytest.approx(by_hand, rel=1e-3)


@pytest.mark.parametrize("stages,micro", [(2, 1), (4, 8), (8, 32), (16, 64), (5, 3)])
def test_pipeline_bubble_formula_matches_the_played_schedule(stages, micro):
    f = _chapter_functions(CHAPTERS[11], ["pipeline_idle_fraction"])
    assert f["pipeline_idle_fraction"](stages, micro) == pytest.approx(
        (stages - 1) / (micro + stages - 1)
    )


def test_mlperf_h100_bubble():
    """MLPerf v4.0 GPT-3 on 512 H100: TP4 x PP8 -> 16 replicas; 2304 sequences / 16 / micro-batch
    2 = 72 micro-batches; plain-schedule bubble 7 / 79."""
    micro = 2304 // (512 // (4 * 8)) // 2
    assert micro == 72
    assert math.isclose(7 / (micro + 7), 0.0886, rel_tol=1e-3)
    text = CHAPTERS[11].read_text(encoding="utf-8")
    assert '("MLPerf GPT-3, H100", "H100 SXM", 16, 1, 4, 8, 2304, 2048' in text
