"""rl.place_trace on hand-written traces in the Chrome-trace format torch.profiler exports.

Every expected count is derived by hand in the comments. No GPU trace from a real GPU is
stored: the GPU joins (External id, correlation) are tested on a hand-written trace.
"""

import json

import pytest

import roofline as rl
from roofline.trace import counts_for


def op(name, ts, dur, dims, types, tid=1, external=None, concrete=None):
    args = {"Input Dims": dims, "Input type": types}
    if external is not None:
        args["External id"] = external
    if concrete is not None:
        args["Concrete Inputs"] = concrete
    return {
        "ph": "X",
        "cat": "cpu_op",
        "name": name,
        "pid": 1,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def cpu_trace():
    return {
        "traceEvents": [
            # linear(x [64, 128], W [256, 128], b [256]) with its children t and addmm
            op("aten::linear", 0, 100, [[64, 128], [256, 128], [256]], ["float"] * 3),
            op("aten::t", 1, 2, [[256, 128]], ["float"]),
            op(
                "aten::addmm",
                5,
                90,
                [[256], [64, 128], [128, 256], [], []],
                ["float"] * 3 + ["Scalar"] * 2,
            ),
            # add(y [64, 256], bias [256]): broadcast to [64, 256]
            op("aten::add", 200, 10, [[64, 256], [256], []], ["float", "float", "Scalar"]),
            # dropout (no formula) with a child: listed once, with its own time
            op("aten::dropout", 300, 40, [[64, 256], [], []], ["float", "Scalar", "Scalar"]),
            op("aten::bernoulli_", 305, 30, [[64, 256], []], ["float", "Scalar"]),
            op("aten::softmax", 400, 20, [[8, 128, 128], [], []], ["float", "Scalar", ""]),
            op(
                "aten::layer_norm",
                500,
                8,
                [[4, 16, 64], [], [64], [64], [], []],
                ["float", "ScalarList", "float", "float", "Scalar", "Scalar"],
            ),
            # a Python-side event that is not an operator: ignored
            {
                "ph": "X",
                "cat": "python_function",
                "name": "f",
                "pid": 1,
                "tid": 1,
                "ts": 0,
                "dur": 900,
            },
        ]
    }


def by_name(result):
    return {row.name: row for row in result.rows}


def test_linear_counts_once_with_its_children_and_its_cpu_time():
    rows = by_name(rl.place_trace(cpu_trace()))
    linear = rows["aten::linear"]
    # 2 x B x D x F = 2 x 64 x 128 x 256 = 4,194,304 FLOPs
    assert linear.flops == 4_194_304
    # fp32: x 64*128 + W 256*128 + b 256 + y 64*256 = 57,600 elements x 4 B = 230,400 B
    assert linear.bytes == 230_400
    assert linear.seconds == pytest.approx(100e-6)  # dur is in microseconds
    assert linear.flops_per_s == pytest.approx(4_194_304 / 100e-6)
    assert "aten::addmm" not in rows and "aten::t" not in rows  # counted inside linear


def test_elementwise_softmax_layer_norm():
    rows = by_name(rl.place_trace(cpu_trace()))
    add = rows["aten::add"]
    # 1 FLOP per output element: 64 x 256 = 16,384; bytes 4 x (16,384 + 256 + 16,384) = 132,096
    assert (add.flops, add.bytes) == (16_384, 132_096)
    softmax = rows["aten::softmax"]
    # 8 x 128 x 128 = 131,072 elements, 5 FLOPs each = 655,360; read + write 2 x 4 x 131,072
    assert (softmax.flops, softmax.bytes) == (655_360, 1_048_576)
    norm = rows["aten::layer_norm"]
    # 4 x 16 x 64 = 4,096 elements x 7 FLOPs = 28,672; x, gamma, beta, y: 4 x (4096 + 128 + 4096)
    assert (norm.flops, norm.bytes) == (28_672, 33_280)


def test_unknown_operators_are_listed_with_their_time_once():
    result = rl.place_trace(cpu_trace())
    unknown = {row.name: row for row in result.unknown}
    assert set(unknown) == {"aten::dropout"}  # bernoulli_ is inside it
    assert unknown["aten::dropout"].seconds == pytest.approx(40e-6)
    assert unknown["aten::dropout"].flops is None
    assert "aten::dropout" in result.table()
    assert len(result) == len(result.rows) + 1


def test_attention_causal_halves_the_flops():
    q = [2, 8, 128, 64]  # B, H, T, d_h in bf16
    dims, types = [q, q, q, [], [], [], []], ["c10::BFloat16"] * 3 + ["", "Scalar", "Scalar", ""]
    full, moved, dtype = counts_for(
        "aten::scaled_dot_product_attention", {"Input Dims": dims, "Input type": types}
    )
    # 4 B H T^2 d_h = 4 x 2 x 8 x 128 x 128 x 64 = 67,108,864
    assert full == 67_108_864 and dtype == "bf16"
    # read Q, K, V, write O: 4 x (2 x 8 x 128 x 64) x 2 B = 1,048,576
    assert moved == 1_048_576
    causal, _, _ = counts_for(
        "aten::scaled_dot_product_attention",
        {
            "Input Dims": dims,
            "Input type": types,
            "Concrete Inputs": ["", "", "", "", "0.", "True", ""],
        },
    )
    assert causal == full / 2


@pytest.mark.parametrize(
    "name, concrete",
    [
        # scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale, gqa)
        ("aten::scaled_dot_product_attention", ["", "", "", "", "0.", "True", ""]),
        # _scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, debug, scale)
        ("aten::_scaled_dot_product_flash_attention", ["", "", "", "0.", "True", "False", ""]),
        # _scaled_dot_product_efficient_attention(q, k, v, attn_bias, log_sumexp, dropout_p,
        # is_causal, scale)
        (
            "aten::_scaled_dot_product_efficient_attention",
            ["", "", "", "", "False", "0.", "True", ""],
        ),
    ],
)
def test_each_attention_operator_reads_is_causal_at_its_own_position(name, concrete):
    q = [1, 4, 64, 32]
    dims, types = [q, q, q], ["c10::BFloat16"] * 3
    full, _, _ = counts_for(name, {"Input Dims": dims, "Input type": types})
    causal, _, _ = counts_for(
        name, {"Input Dims": dims, "Input type": types, "Concrete Inputs": concrete}
    )
    # 4 B H T^2 d_h = 4 x 1 x 4 x 64 x 64 x 32 = 2,097,152, halved under the causal mask
    assert full == 2_097_152 and causal == full / 2
    # the flash kernel's return_debug_mask (position 5) must not be read as is_causal
    if "flash" in name:
        wrong = ["", "", "", "0.", "False", "True", ""]
        not_causal, _, _ = counts_for(
            name, {"Input Dims": dims, "Input type": types, "Concrete Inputs": wrong}
        )
        assert not_causal == full


def gpu_trace():
    n = 1024
    return {
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
        "traceEvents": [
            op("aten::mm", 0, 50, [[n, n], [n, n]], ["c10::BFloat16"] * 2, external=7),
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "ts": 10,
                "dur": 5,
                "pid": 1,
                "tid": 1,
                "args": {"correlation": 99, "External id": 7},
            },
            # one kernel joined through the runtime call's correlation, one by External id
            {
                "ph": "X",
                "cat": "kernel",
                "name": "sm90_gemm",
                "ts": 60,
                "dur": 20,
                "pid": 0,
                "tid": 7,
                "args": {"correlation": 99},
            },
            {
                "ph": "X",
                "cat": "kernel",
                "name": "splitk_reduce",
                "ts": 80,
                "dur": 10,
                "pid": 0,
                "tid": 7,
                "args": {"External id": 7, "correlation": 100},
            },
            # a kernel from another operator not in the trace: ignored
            {
                "ph": "X",
                "cat": "kernel",
                "name": "other",
                "ts": 95,
                "dur": 1000,
                "pid": 0,
                "tid": 7,
                "args": {"correlation": 5},
            },
        ],
    }


def test_gpu_kernels_join_to_their_operator_and_the_catalog_chip():
    result = rl.place_trace(gpu_trace())
    (mm,) = result.rows
    assert mm.on == "gpu"
    assert mm.seconds == pytest.approx(30e-6)  # the two kernels: 20 + 10 us, not the CPU's 50
    # 2 x 1024^3 FLOPs over 3 x 1024^2 x 2 B = 341.3 FLOPs/B, above the H100's bf16 ridge
    # (989.5 TFLOP/s / 3.35 TB/s = 295.4 FLOPs/B): compute-bound
    assert mm.intensity == pytest.approx(2 * 1024**3 / (3 * 1024**2 * 2))
    assert result.chip.name == "H100 SXM"
    assert mm.bound == "compute"
    fig = result.plot()
    assert len(result.points()) == 1
    # 2 x 1024^3 FLOPs in 30 us = 71.6 TFLOP/s, under the 989.5 TFLOP/s roof: no violation
    assert mm.flops_per_s == pytest.approx(2 * 1024**3 / 30e-6)
    assert fig.roofline_violations == []


def test_reads_a_file_and_says_what_a_bad_input_is(tmp_path):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(cpu_trace()))
    assert len(rl.place_trace(path).rows) == 4
    with pytest.raises(FileNotFoundError, match="record_shapes=True"):
        rl.place_trace(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="traceEvents"):
        rl.place_trace({"events": []})


def test_a_real_torch_profile_on_cpu(tmp_path):
    """Skipped without PyTorch (not installed in CI): the profiler's own export, placed."""
    torch = pytest.importorskip("torch")
    layer = torch.nn.Linear(256, 512)
    x = torch.ones(64, 256)
    q = torch.ones(2, 4, 128, 32)  # B, H, T, d_h
    with torch.no_grad(), torch.profiler.profile(record_shapes=True) as prof:
        torch.nn.functional.gelu(layer(x))
        torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    rows = by_name(rl.place_trace(path))
    # linear: 2 x 64 x 256 x 512 = 16,777,216 FLOPs;
    # 4 B x (64*256 + 512*256 + 512 + 64*512 = 180,736 elements) = 722,944 B
    assert (rows["aten::linear"].flops, rows["aten::linear"].bytes) == (16_777_216, 722_944)
    # gelu on 64 x 512: 32,768 FLOPs, read + write 2 x 4 x 32,768 = 262,144 B
    assert (rows["aten::gelu"].flops, rows["aten::gelu"].bytes) == (32_768, 262_144)
    # causal attention: 4 x 2 x 4 x 128^2 x 32 / 2 = 8,388,608 FLOPs
    assert rows["aten::scaled_dot_product_attention"].flops == 8_388_608
    assert all(row.seconds > 0 for row in rows.values())


def test_a_child_operators_kernels_count_for_its_known_parent():
    # linear -> (child) mm launches the kernel: its 40 us belong to linear's row
    trace = {
        "deviceProperties": [{"name": "NVIDIA H100 80GB HBM3"}],
        "traceEvents": [
            op(
                "aten::linear",
                0,
                100,
                [[8, 16], [32, 16], []],
                ["c10::BFloat16"] * 2 + [""],
                external=1,
            ),
            op("aten::mm", 10, 80, [[8, 16], [16, 32]], ["c10::BFloat16"] * 2, external=2),
            {
                "ph": "X",
                "cat": "kernel",
                "name": "gemm",
                "ts": 200,
                "dur": 40,
                "pid": 0,
                "tid": 7,
                "args": {"External id": 2},
            },
        ],
    }
    (row,) = rl.place_trace(trace).rows
    assert row.name == "aten::linear" and row.seconds == pytest.approx(40e-6)
    # 2 x 8 x 16 x 32 = 8192 FLOPs; bf16 x (8*16 + 32*16 + 8*32 = 896 elements) = 1792 B
    assert (row.flops, row.bytes) == (8192, 1792)


def test_a_known_operator_without_shapes_is_kept_with_a_note():
    trace = {"traceEvents": [op("aten::mm", 0, 50, [], [])]}
    result = rl.place_trace(trace)
    assert result.rows == [] and [r.name for r in result.unknown] == ["aten::mm"]
    assert any("record_shapes=True" in note for note in result.notes)
