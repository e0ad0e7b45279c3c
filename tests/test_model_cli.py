"""`python -m roofline model`: the figures it prints and writes, and exit code 2 with a clear
message on bad input."""

import json
import subprocess
import sys

import pytest

from roofline.model_cli import main, parse_tokens

TRAIN = [
    "Llama 3 70B",
    "--chip",
    "H100",
    "--chips",
    "8192",
    "--train",
    "--tokens-per-step",
    "16M",
    "--seq-len",
    "8192",
    "--layout",
    "dp=64,tp=8,pp=16",
]


def test_token_counts_as_papers_write_them():
    assert parse_tokens("16M") == 16 * 2**20 == 2048 * 8192  # Llama 3's 16M-token batch
    assert parse_tokens("2048x8192") == 16_777_216
    assert parse_tokens("4Mi") == 4 * 2**20
    assert parse_tokens("16,777,216") == 16_777_216
    assert parse_tokens("1.6e7") == 16_000_000


def test_training_step_printed_and_written(tmp_path, capsys):
    out = tmp_path / "step.json"
    assert main(TRAIN + ["--json", str(out)]) == 0
    text = capsys.readouterr().out
    for words in ("math", "TP all-reduces", "pipeline bubble", "compute-bound", "MFU ceiling"):
        assert words in text
    data = json.loads(out.read_text())
    assert data["fits"] is True and data["bound"] == "compute"
    # 32 micro-batches of one sequence and a 16-stage pipeline: the bubble is 15/32 of the
    # busiest stage's math; that stage (the last: 5 layers + the output head) runs more than
    # the average stage; and the data-parallel all-reduce outlasts the last micro-batch's
    # backward (2/3 of the math / 32)
    P = 70_553_706_496
    layer = 6 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672) + 12 * 8192 * 8192
    head = 6 * 128256 * 8192
    math_s = (5 * layer + head) * 2048 * 8192 / 512 / 989.5e12
    # ring over 64 nodes' 400 Gb/s NICs of the gradients of the stage with the most
    # parameters (the last: 5 layers of 855,654,400 + the output head + the final norm) / tp 8
    last_stage = 5 * 855_654_400 + 128_256 * 8192 + 8192
    assert 80 * 855_654_400 + 2 * 128_256 * 8192 + 8192 == P
    dp_s = 2 * 63 / 64 * 2 * last_stage / 8 / 50e9
    t_lower = math_s * 47 / 32 + dp_s - 2 / 3 * math_s / 32
    model_per_chip = (80 * layer + head) * 2048 * 8192 / 8192
    ceiling = model_per_chip / (t_lower * 989.5e12)
    assert data["mfu_ceiling"] == pytest.approx(ceiling)
    assert f"{ceiling:.1%}" in text
    assert data["params"] == P
    assert data["layout"] == {"tp": 8, "cp": 1, "ep": 1, "fsdp": 1, "pp": 16, "dp": 64}


def test_model_summary_and_config_files(tmp_path, capsys):
    assert main(["PaLM 540B"]) == 0
    assert "multi-query" in capsys.readouterr().out
    hf = tmp_path / "config.json"
    hf.write_text(
        json.dumps(
            {
                "hidden_size": 4096,
                "intermediate_size": 14336,
                "num_hidden_layers": 32,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "vocab_size": 128256,
            }
        )
    )
    out = tmp_path / "m.json"
    assert main([str(hf), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["params"] == 8_030_261_248
    ours = tmp_path / "tiny.json"
    ours.write_text(json.dumps({"layers": 2, "d_model": 64, "heads": 4, "d_ff": 256, "vocab": 100}))
    assert main([str(ours)]) == 0
    assert "Model tiny" in capsys.readouterr().out


@pytest.mark.parametrize(
    "change, words",
    [
        ({0: "Llama 3 7B"}, "unknown model 'Llama 3 7B'. Closest: Llama 3 70B"),
        ({2: "H1000"}, "unknown chip 'H1000'. Closest: H100"),
        ({11: "dp=64,tp=8"}, "multiply to 512"),
        ({7: "16000000"}, "not a whole number of sequences"),
        ({7: "4Mi", 11: "dp=1024,tp=8"}, "do not split evenly"),
        ({0: "missing.json"}, "cannot read missing.json"),
    ],
)
def test_bad_input_exits_2_with_a_message(change, words, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    argv = [change.get(i, arg) for i, arg in enumerate(TRAIN)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_train_needs_its_options(capsys):
    assert main(["Llama 3 8B", "--train", "--chip", "H100"]) == 2
    assert "--tokens-per-step, --seq-len" in capsys.readouterr().err


def test_python_dash_m_dispatch():
    ok = subprocess.run(
        [sys.executable, "-m", "roofline", "model", *TRAIN], capture_output=True, text=True
    )
    assert ok.returncode == 0 and "MFU ceiling" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "roofline", "model", "nonsense-model"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "unknown model" in bad.stderr


SERVE = ["Llama 3 70B", "--chip", "H100", "--serve", "--batch", "64", "--context", "4096"]


def test_serving_printed_and_written(tmp_path, capsys):
    out = tmp_path / "serve.json"
    assert main(SERVE + ["--chips", "8", "--tp", "8", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    for words in (
        "HBM weights",
        "HBM KV cache",
        "decode: TP",
        "time to first token",
        "memory-bound",
    ):
        assert words in text
    data = json.loads(out.read_text())
    # weights read by hand: 70,553,706,496 parameters less the 128,256 x 8192 input table,
    # 2 bytes each, split 8 ways, plus each GPU's eighth of the KV cache, at 3.35 TB/s
    weights = (70_553_706_496 - 128_256 * 8192) * 2 / 8
    read = (weights + 64 * 4096 * 327_680 / 8) / 3.35e12  # 5.19 + 3.21 ms
    assert data["t_decode_step_s"] == pytest.approx(read)
    assert data["tokens_per_s"] == pytest.approx(64 / read)
    assert data["kv_cache_bytes"] == 64 * 4096 * 327_680 and data["fits"] is True


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--chips", "8", "--tp", "3"], "must divide n_chips"),
        (["--batch", "0"], "batch must be at least 1"),
        (["--weights", "fp7"], "fp7"),
    ],
)
def test_serving_bad_input_exits_2(extra, words, capsys):
    assert main(SERVE + extra) == 2
    assert words in capsys.readouterr().err


def test_serving_context_beyond_the_model(capsys):
    assert main(["Llama 2 70B", "--chip", "H100", "--serve", "--context", "8192"]) == 2
    assert "4,096" in capsys.readouterr().err


def test_training_layout_options_from_the_command_line(capsys):
    # MLPerf GPT-3 on 512 H100: 16 bytes x 175e9 / 32 = 87.5 GB of state per GPU without
    # the distributed optimizer; with it (and the interleaved schedule it ran) it fits
    base = [
        "GPT-3 175B",
        "--chip",
        "H100",
        "--chips",
        "512",
        "--train",
        "--tokens-per-step",
        "2304x2048",
        "--seq-len",
        "2048",
        "--layout",
        "tp=4,pp=8,dp=16",
        "--dtype",
        "fp8",
        "--microbatches",
        "72",
    ]
    assert main(base) == 0
    assert "DOES NOT FIT" in capsys.readouterr().out
    assert main(base + ["--zero-stage", "1", "--virtual-stages", "4"]) == 0
    out = capsys.readouterr().out
    assert "(fits)" in out and "ZeRO-1" in out and "interleaved 1F1B, 4 chunks" in out


def test_partial_recomputation_from_the_command_line(capsys):
    # PaLM's share of layers rematerialised (HFU / MFU = 57.8 / 46.2): about 0.76; the repeated
    # work is then 1 - 46.2 / 57.8 = 20 % of the hardware FLOPs
    args = [
        "PaLM 540B",
        "--chip",
        "TPU v4",
        "--chips",
        "6144",
        "--train",
        "--tokens-per-step",
        "2048x2048",
        "--seq-len",
        "2048",
        "--layout",
        "dp=2,fsdp=256,tp=12",
        "--recompute",
        "0.76",
    ]
    assert main(args) == 0
    assert "recomputation (20% of the math is repeated work)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(args[:-1] + ["1.5"])
