"""Claims of chapters 6-8 (communication rooflines, a transformer layer, problems), each
checked against an independent derivation: raw catalog records, sympy vs numbers, a
simulated ring all-reduce, hand-written byte counts."""

import math
import re
from pathlib import Path

import numpy as np
import pytest
import sympy

import roofline as rl
import roofline.transformer as tf
from roofline.exercises import check, get_exercise, list_exercises

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = {
    "06": ROOT / "chapters" / "06_communication_rooflines.md",
    "07": ROOT / "chapters" / "07_transformer_layer.md",
    "08": ROOT / "chapters" / "08_problems.md",
}
B, D, F = sympy.symbols("B D F", positive=True)


# ---------------------------------------------------------------- chapter 6


def test_q9_block_split_along_contraction_dimension():
    """[X0, X1] @ [W0; W1] = X0 W0 + X1 W1 when D is split, symbolically and numerically."""
    Xs = sympy.Matrix(3, 6, lambda i, j: sympy.Symbol(f"x_{i}_{j}"))
    Ws = sympy.Matrix(6, 2, lambda i, j: sympy.Symbol(f"w_{i}_{j}"))
    split = Xs[:, :3] * Ws[:3, :] + Xs[:, 3:] * Ws[3:, :]
    assert sympy.expand(Xs * Ws - split) == sympy.zeros(3, 2)
    # the cross terms X1 W0 would be wrong: adding them changes the result
    assert sympy.expand(Xs * Ws - (split + Xs[:, 3:] * Ws[:3, :])) != sympy.zeros(3, 2)
    # block-matrix algebra with sympy's own BlockMatrix
    X0, X1 = sympy.MatrixSymbol("X0", B, D / 2), sympy.MatrixSymbol("X1", B, D / 2)
    W0, W1 = sympy.MatrixSymbol("W0", D / 2, F), sympy.MatrixSymbol("W1", D / 2, F)
    collapsed = sympy.block_collapse(
        sympy.BlockMatrix([[X0, X1]]) * sympy.BlockMatrix([[W0], [W1]])
    )
    assert collapsed == X0 * W0 + X1 * W1
    rng = np.random.default_rng(1)
    Xn, Wn = rng.standard_normal((5, 8)), rng.standard_normal((8, 7))
    np.testing.assert_allclose(Xn @ Wn, Xn[:, :4] @ Wn[:4] + Xn[:, 4:] @ Wn[4:], atol=1e-12)


def test_q1_per_chip_flops_and_partial_sum_bytes():
    plan = rl.sharded_matmul(B, D, F, n=2)
    # each chip: B*F outputs, each a sum over D/2 terms: D/2 multiplies + about D/2 adds
    assert sympy.simplify(plan.per_chip.flops - B * F * 2 * (D / 2)) == 0
    assert sympy.simplify(plan.total_flops - rl.matmul(B, D, F).flops) == 0
    assert sympy.simplify(plan.send_bytes_per_direction - B * F * rl.DTYPE_BYTES["bf16"]) == 0


def test_critical_D_8755_from_raw_catalog_fields():
    v5e = rl.get_chip("TPU v5e")
    peak = v5e.peak("bf16").dense_flops_per_s
    one_way = v5e.interconnect.one_way_bytes_per_s
    assert "4.5e10" in v5e.interconnect.source.says and "one-way" in v5e.interconnect.source.says
    by_hand = (2 * peak) / one_way  # D/2 > peak / link
    assert 8755 < by_hand < 8756
    assert rl.sharded_critical_D(v5e, n=2) == pytest.approx(by_hand, rel=1e-12)
    # the sympy route the chapter takes
    P, W = sympy.symbols("P W", positive=True)
    plan = rl.sharded_matmul(B, D, F, n=2)
    d_star = sympy.solve(sympy.Eq(plan.per_chip.flops / P, plan.send_bytes_per_direction / W), D)[0]
    assert float(d_star.subs({P: peak, W: one_way})) == pytest.approx(by_hand, rel=1e-12)


def test_threshold_depends_on_D_not_B():
    P, W = sympy.symbols("P W", positive=True)
    plan = rl.sharded_matmul(B, D, F, n=2)
    d_star = sympy.solve(sympy.Eq(plan.per_chip.flops / P, plan.send_bytes_per_direction / W), D)[0]
    assert not d_star.free_symbols & {B, F}
    # the link condition alone does not depend on B (the HBM condition does: see test_multichip)
    for b in (1, 64, 4096, 65536):
        short, long = (
            rl.sharded_estimate(b, 4096, 8192, "TPU v5e"),
            rl.sharded_estimate(b, 16384, 8192, "TPU v5e"),
        )
        assert short.t_link > short.t_math and long.t_link < long.t_math


def test_full_duplex_costs_2BF_each_way_with_the_one_way_figure():
    v5e = rl.get_chip("TPU v5e")
    est = rl.sharded_estimate(512, 8192, 4096, v5e, n=2)
    assert est.t_link == pytest.approx(2 * 512 * 4096 / 4.5e10, rel=1e-12)  # 2BF bytes, one way
    assert v5e.interconnect.bidirectional_bytes_per_s == 2 * v5e.interconnect.one_way_bytes_per_s
    h100 = rl.get_chip("H100 SXM")
    assert h100.interconnect.bidirectional_total_bytes_per_s == pytest.approx(
        900e9
    )  # spec: 900 GB/s
    assert h100.link_bytes_per_s == pytest.approx(900e9 / 2 / 18)


def _simulated_ring_allreduce(partials):
    """Ring all-reduce (reduce-scatter then all-gather); returns results and elements sent per chip."""
    n = len(partials)
    chunks = [np.array_split(p.copy(), n) for p in partials]
    sent = [0] * n
    for step in range(n - 1):  # reduce-scatter
        outgoing = [(i, (i - step) % n, chunks[i][(i - step) % n].copy()) for i in range(n)]
        for i, c, data in outgoing:
            chunks[(i + 1) % n][c] += data
            sent[i] += data.size
    for step in range(n - 1):  # all-gather
        outgoing = [(i, (i + 1 - step) % n, chunks[i][(i + 1 - step) % n].copy()) for i in range(n)]
        for i, c, data in outgoing:
            chunks[(i + 1) % n][c] = data
            sent[i] += data.size
    return [np.concatenate(c) for c in chunks], sent


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_ring_allreduce_bytes_match_simulation(n):
    Bn, Fn = 4, 8 * 3
    rng = np.random.default_rng(n)
    partials = [rng.standard_normal(Bn * Fn) for _ in range(n)]
    results, sent = _simulated_ring_allreduce(partials)
    for r in results:
        np.testing.assert_allclose(r, sum(partials), atol=1e-12)
    plan = rl.sharded_matmul(Bn, 64, Fn, n=n)
    for elements in sent:  # all in one direction (to the next chip in the ring)
        assert elements * rl.DTYPE_BYTES["bf16"] == pytest.approx(plan.send_bytes_per_direction)


# ---------------------------------------------------------------- chapter 7


def test_llama_8b_shape_gives_about_8_billion_parameters():
    shape = tf.LLAMA_8B
    vocab = 128256  # Llama 3 vocabulary, untied input/output
    total = 32 * shape.weights_per_layer + 2 * vocab * shape.d_model + 0
    assert 8.0e9 < total < 8.1e9
    # written out by hand: Q and O are D x D, K and V are D x (D/4), three D x F MLP matrices
    Dm, Fm = 4096, 14336
    assert shape.weights_per_layer == 2 * Dm * Dm + 2 * Dm * Dm // 4 + 3 * Dm * Fm


def test_layer_flops_decode_and_prefill_by_hand():
    s = tf.LLAMA_8B
    P = s.weights_per_layer
    T = 4096
    decode = tf.layer_total(s, 1, T, "decode")
    assert decode.flops == 2 * P + 4 * s.n_heads * T * s.head_dim
    prefill = tf.layer_total(s, 3, T, "prefill")
    assert prefill.flops == 3 * (T * 2 * P + 4 * s.n_heads * T * T * s.head_dim)
    # decode bytes: weights once, KV cache per sequence, plus small activations
    kv = 2 * T * s.n_kv_heads * s.head_dim * 2
    assert decode.bytes > 2 * P + kv
    assert decode.bytes < 1.01 * (2 * P + kv + 2 * s.n_heads * T * 2)


def test_decode_weight_matmul_intensity_is_about_B_and_attention_is_not():
    for b in (1, 8, 64):
        mlp = next(o for o in tf.layer_costs(tf.LLAMA_8B, b, 4096, "decode") if o.name == "MLP up")
        assert mlp.intensity == pytest.approx(b, rel=0.02)
    att = [
        next(o for o in tf.layer_costs(tf.LLAMA_8B, b, 4096, "decode") if "Q K" in o.name).intensity
        for b in (1, 8, 64)
    ]
    assert max(att) == pytest.approx(min(att), rel=1e-12)
    s = tf.LLAMA_8B
    assert att[0] < s.n_heads / s.n_kv_heads


@pytest.mark.parametrize("chip", ["TPU v5e", "H100 SXM", "A100 SXM", "TPU v5p"])
@pytest.mark.parametrize("T", [256, 4096])
def test_decode_critical_batch_matches_sympy(chip, T):
    c = rl.get_chip(chip)
    Bsym = sympy.Symbol("B", positive=True)
    for include in (True, False):
        ops = [
            o
            for o in tf.layer_costs(tf.LLAMA_8B, Bsym, T, "decode")
            if include or "attention" not in o.name
        ]
        flops, moved = sum(o.flops for o in ops), sum(o.bytes for o in ops)
        roots = sympy.solve(
            sympy.Eq(flops / c.peak_flops_per_s("bf16"), moved / c.hbm_bytes_per_s), Bsym
        )
        got = tf.decode_critical_batch(tf.LLAMA_8B, T, chip, include_attention=include)
        if roots:
            assert got == pytest.approx(float(roots[0]), rel=1e-9)
        else:
            assert got == math.inf
    weights_only = tf.decode_critical_batch(tf.LLAMA_8B, T, chip, include_attention=False)
    ridge = c.peak_flops_per_s("bf16") / c.hbm_bytes_per_s
    assert ridge < weights_only < 1.25 * ridge


def test_whole_layer_never_compute_bound_at_4096_tokens():
    for chip in rl.list_chips():
        c = rl.get_chip(chip)
        if "bf16" not in c.dtypes:
            continue
        assert tf.decode_critical_batch(tf.LLAMA_8B, 4096, chip) == math.inf
        assert (
            rl.estimate(tf.layer_total(tf.LLAMA_8B, 100_000, 4096, "decode"), chip).bound
            == "memory"
        )


def test_transformer_model_works_on_numpy_and_rejects_bad_input():
    batch = np.array([1.0, 16.0, 256.0])
    total = tf.layer_total(tf.LLAMA_8B, batch, 4096, "decode")
    for i, b in enumerate(batch):
        assert total.flops[i] == pytest.approx(tf.layer_total(tf.LLAMA_8B, b, 4096, "decode").flops)
    fused = tf.layer_total(tf.LLAMA_8B, 1, 4096, "prefill", fused_attention_kernel=True)
    assert fused.flops == tf.layer_total(tf.LLAMA_8B, 1, 4096, "prefill").flops
    assert fused.bytes < tf.layer_total(tf.LLAMA_8B, 1, 4096, "prefill").bytes
    with pytest.raises(ValueError, match="prefill.*decode"):
        tf.layer_costs(tf.LLAMA_8B, 1, 4096, mode="training")
    with pytest.raises(TypeError, match="TransformerShape"):
        tf.layer_costs("llama", 1, 4096)
    with pytest.raises(ValueError, match="multiple of"):
        tf.TransformerShape("bad", 4096, 14336, 32, 6, 128)
    with pytest.raises(ValueError):
        tf.layer_costs(tf.LLAMA_8B, 0, 4096)


# ---------------------------------------------------------------- chapter 8


def test_int8_critical_batch_from_raw_peak():
    v5e = rl.get_chip("TPU v5e")
    ridge = v5e.peak("int8").dense_flops_per_s / v5e.hbm_bytes_per_s
    # intensity of an all-int8 matmul tends to 2B: B_crit = ridge / 2
    inten = rl.matmul(B, D, F, dtype="int8").intensity
    assert sympy.limit(inten.subs(F, D), D, sympy.oo) == 2 * B
    assert rl.critical_batch_size(v5e, "int8") == pytest.approx(ridge / 2, rel=1e-12)
    assert get_exercise("problems-int8-critical-batch").expected() == pytest.approx(ridge / 2)


def test_int8_weights_approx_about_120_and_exact_crossovers_higher():
    v5e = rl.get_chip("TPU v5e")
    P, W = v5e.peak("bf16").dense_flops_per_s, v5e.hbm_bytes_per_s
    approx = P / W * 1 / 2
    assert 119.5 < approx < 121
    assert rl.critical_batch_size(v5e, "bf16", weights="int8") == pytest.approx(approx, rel=1e-12)
    Bsym = sympy.Symbol("B", positive=True)
    for size, lower, upper in ((4096, 1.10, 1.20), (1024, 1.80, 1.95)):
        # written by hand: bf16 activations 2BD, int8 weights DF, bf16 output 2BF
        root = sympy.solve(
            sympy.Eq(
                2 * Bsym * size * size / P, (2 * Bsym * size + size * size + 2 * Bsym * size) / W
            ),
            Bsym,
        )[0]
        exact = rl.exact_critical_batch_size(v5e, size, size, "bf16", weights="int8")
        assert exact == pytest.approx(float(root), rel=1e-12)
        assert lower * approx < exact < upper * approx


def test_int8_weights_exercises_on_the_h100_by_hand():
    # H100 SXM spec sheet: 1,979 TFLOPS bf16 with sparsity (dense half), 3.35 TB/s
    P, W = 1979e12 / 2, 3.35e12
    assert get_exercise("problems-int8-weights-approx").expected() == pytest.approx(
        P / W / 2, rel=1e-3
    )
    Bsym = sympy.Symbol("B", positive=True)
    roots = []
    for size in (4096, 1024):
        # bf16 activations 2BD, int8 weights DF, bf16 output 2BF
        roots.append(
            float(
                sympy.solve(
                    sympy.Eq(
                        2 * Bsym * size * size / P,
                        (2 * Bsym * size + size * size + 2 * Bsym * size) / W,
                    ),
                    Bsym,
                )[0]
            )
        )
    assert 172 < roots[0] < 173 and 349 < roots[1] < 350
    assert get_exercise("problems-int8-weights-exact").expected() == pytest.approx(
        tuple(roots), rel=1e-3
    )
    assert check("problems-int8-weights-exact", tuple(roots)).correct
    assert not check(
        "problems-int8-weights-exact", (P / W / 2, P / W / 2)
    ).correct  # the approximation


def test_throughput_curve_on_numpy_arrays():
    batch = np.logspace(0, 14, 50, base=2)
    for size in (1024, 8192):
        curve = rl.estimate(rl.matmul(batch, size, size), "TPU v5e").achieved_flops_per_s
        scalar = [
            rl.estimate(rl.matmul(float(b), size, size), "TPU v5e").achieved_flops_per_s
            for b in batch
        ]
        np.testing.assert_allclose(curve, scalar, rtol=1e-12)
        slope = np.diff(np.log(curve[:5])) / np.diff(np.log(batch[:5]))
        assert np.allclose(slope, 1, atol=0.02)  # bandwidth-bound: slope 1
        assert curve[-1] == pytest.approx(rl.get_chip("TPU v5e").peak_flops_per_s("bf16"))


def test_per_example_matmul_is_bandwidth_bound_on_every_chip():
    sizes = np.array([1, 16, 1024, 65536], dtype=float)
    for b in sizes:
        for d in sizes:
            assert rl.per_example_matmul(b, d, d).intensity < 1  # bf16: < 2 FLOPs / 2 bytes
    lowest = min(
        rl.critical_intensity(c, dt) for c in rl.list_chips() for dt in rl.get_chip(c).dtypes
    )
    assert lowest > 1
    for c in rl.list_chips():
        chip = rl.get_chip(c)
        if "bf16" in chip.dtypes:
            assert rl.estimate(rl.per_example_matmul(4096, 4096, 4096), chip).bound == "memory"


def test_h100_critical_batch_from_spec_sheet_dense_figure():
    # Problem 5 reads the H100 PCIe card's sheet (the SXM's ridge is printed in chapters 5, 7)
    pcie = rl.get_chip("H100 PCIe")
    peak = pcie.peak("bf16")
    assert "1,513" in peak.source.says and "sparsity" in peak.source.says
    assert "2,000 gigabytes per second" in pcie.memory_source.says
    expected = 1513e12 / 2 / 2000e9  # by hand: 756.5 TFLOP/s / 2 TB/s = 378.25
    assert 378 < expected < 379
    assert get_exercise("problems-h100-critical-batch").expected() == pytest.approx(expected)
    assert not check("problems-h100-critical-batch", 2 * expected).correct  # the sparse-figure slip


def test_link_problems_from_raw_fields():
    v5p = rl.get_chip("TPU v5p")
    assert get_exercise("problems-v5p-critical-d").expected() == pytest.approx(
        2 * v5p.peak("bf16").dense_flops_per_s / v5p.interconnect.one_way_bytes_per_s
    )
    h100 = rl.get_chip("H100 SXM")
    assert get_exercise("problems-h100-nvlink-critical-d").expected() == pytest.approx(
        2 * h100.peak("bf16").dense_flops_per_s / (900e9 / 2)
    )


# ---------------------------------------------------------------- exercises and chapter text

MINE = [e for e in list_exercises() if e.startswith(("comms-", "xformer-", "problems-"))]


def test_each_chapter_has_at_least_four_exercises():
    for prefix in ("comms-", "xformer-", "problems-"):
        assert sum(e.startswith(prefix) for e in MINE) >= 4


@pytest.mark.parametrize("exercise_id", MINE)
def test_exercise_accepts_its_answer_and_diagnoses_its_mistakes(exercise_id):
    ex = get_exercise(exercise_id)
    expected = ex.expected()
    assert check(exercise_id, expected).correct
    assert not check(exercise_id, None).correct
    for mistake in ex.mistakes(ex.resolve()) if ex.mistakes else []:
        feedback = check(exercise_id, mistake.value)
        accepted = mistake.tag == "accepted"  # another right answer (a vendor's link figure)
        assert feedback.correct == accepted, f"{exercise_id}: {mistake.value!r} judged wrongly"
    if ex.kind == "parts":
        assert not check(exercise_id, tuple(float(v) * 2 for v in expected)).correct
    elif ex.kind not in ("symbolic", "choice"):
        assert not check(exercise_id, float(expected) * 2).correct


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_chapter_structure_glue_and_checks(chapter):
    text = CHAPTERS[chapter].read_text(encoding="utf-8")
    assert "Learning goals" in text
    sections = re.findall(r"^## (.+)$", text, flags=re.M)
    takeaways = text.count(":class: tip")
    assert takeaways >= len([s for s in sections if not s.startswith("Exercises")])
    used = set(re.findall(r"\{glue:text\}`([^`]+)`", text))
    glued = set(re.findall(r"glue\(\"([^\"]+)\"", text))
    assert used <= glued, f"glued names used but never computed: {used - glued}"
    labels = re.findall(r"^:label: (\S+)", text, flags=re.M)
    assert len(labels) == len(set(labels))
    for exercise_id in re.findall(r"check\(\"([^\"]+)\"", text):
        get_exercise(exercise_id)  # raises KeyError for an unknown id
    assert "rl.widgets." in text


def test_prefill_matmuls_compute_bound_on_every_chip_and_unfused_attention_near_d_h():
    ops = tf.layer_costs(tf.LLAMA_8B, 1, 4096, "prefill")
    chips = [c for c in rl.list_chips() if "bf16" in rl.get_chip(c).dtypes]
    for op in ops:
        if "attention" in op.name:
            # writes/reads the T x T scores for d_h multiply-adds each: intensity just under d_h
            assert 0.9 * tf.LLAMA_8B.head_dim < op.intensity < tf.LLAMA_8B.head_dim
        else:
            assert all(rl.estimate(op, c).bound == "compute" for c in chips), op.name
    fused = tf.layer_costs(tf.LLAMA_8B, 1, 4096, "prefill", fused_attention_kernel=True)
    assert next(o for o in fused if "fused" in o.name).intensity > 10 * tf.LLAMA_8B.head_dim


# ---------------------------------------------------------------- chapter 6's transferred exercises
def test_chapter_6_new_exercises_by_hand():
    B, D, F = sympy.symbols("B D F", positive=True)
    n = sympy.Symbol("n", positive=True, integer=True)
    V, W = sympy.symbols("V W", positive=True)
    # two TPU v4 chips: D = 2P / link, with 275 TFLOP/s bf16 and 45 GB/s one way per ICI link
    assert check("comms-critical-d-v4", 2 * 275e12 / 45e9).correct
    # per-chip memory bytes, W split by columns: X[B, D] whole, W_i[D, F/n], Y_i[B, F/n],
    # 2 bytes each; the chapter's split along D (a whole [B, F] partial sum) is not it
    assert check("comms-hbm-bytes-per-chip", 2 * B * D + 2 * D * F / n + 2 * B * F / n).correct
    assert not check("comms-hbm-bytes-per-chip", 2 * B * D / n + 2 * D * F / n + 2 * B * F).correct
    # two TPU v6e chips, B = 512, D = 32768, F = 8192: D is above the link's 2P / BW_link =
    # 2 x 918e12 / 90e9 = 20,400, but B = 512 is below the slice's HBM critical batch (about
    # 918e12 / 1.64e12 = 560 with B << D/2, F; 625 exactly): memory-bound
    assert check("comms-which-regime", "memory").correct
    # fp32 partial sums (V = 4BF) on a one-way ring: 2 (n-1)/n V
    assert check("comms-ring-bytes-fp32", 2 * (n - 1) / n * 4 * B * F).correct
    assert not check("comms-ring-bytes-fp32", 2 * (n - 1) / n * 2 * B * F).correct
    # full mesh all-gather: one piece V/n per link, all links at once
    assert check("comms-allgather-mesh", V / (n * W)).correct
    assert "ring" in check("comms-allgather-mesh", (n - 1) * V / (n * W)).message
    # the bandwidth is now BW (W is the weights in the notation table); W stays accepted
    BW = sympy.Symbol("BW", positive=True)
    assert check("comms-allgather-mesh", V / (n * BW)).correct
    assert check("comms-allgather-mesh", "V/(n*BW)").correct
    assert check("comms-allgather-mesh", "V/(n*W)").correct
    assert not check("comms-allgather-mesh", "V/(n*BW*W)").correct
