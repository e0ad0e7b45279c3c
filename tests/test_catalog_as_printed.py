"""Issue 30, section 4: catalog figures as the cited pages print them, derived figures apart.

Expected values are the printed figures and hand arithmetic on them (written in the comments),
never read back from the catalog.
"""

import re

import pytest

import roofline as rl
from roofline.catalog import chip_for_device


def _all_sources():
    for chip in rl.CATALOG.values():
        for peak in chip.peaks:
            yield chip.name, peak.source
        yield chip.name, chip.memory_source
        for link in (chip.interconnect, chip.host_link, chip.network):
            if link is not None:
                yield chip.name, link.source
                if link.vendor is not None:
                    yield chip.name, link.vendor


def test_no_arithmetic_inside_a_quote():
    # a quote holds the source's words; "x / 8 = y", "(180 GB each)" style arithmetic belongs
    # in `derivation`
    for name, source in _all_sources():
        assert " = " not in source.says, (name, source.says)
        assert not re.search(r"\d\s*/\s*\d+\s*=", source.says), (name, source.says)
        assert "each)" not in source.says, (name, source.says)


def test_tpu_int8_figures_cite_the_text_that_prints_them():
    # Google's v5e page prints "Peak compute per chip (Int8) | 393 TOPs"; 3.94e14 is the
    # scaling book's table, which the catalog cites for it
    v5e = rl.get_chip("TPU v5e").peak("int8")
    assert v5e.dense_flops_per_s == 3.94e14
    assert "3.94e14" in v5e.source.says and "scaling-book" in v5e.source.url
    assert "393" in v5e.source.derivation
    # v5p: Google's page prints no int8 figure; the scaling book prints 9.18e14
    v5p = rl.get_chip("TPU v5p").peak("int8")
    assert v5p.dense_flops_per_s == 9.18e14 and "9.18e14" in v5p.source.says
    assert "scaling-book" in v5p.source.url


def test_integer_work_accumulates_in_int32():
    for chip in rl.CATALOG.values():
        for peak in chip.peaks:
            if peak.dtype.startswith("int"):
                assert peak.accumulate == "int32", chip.name
            elif peak.accumulate not in ("fp32", "fp16"):
                raise AssertionError(f"{chip.name} {peak.dtype}: {peak.accumulate}")
    # a Peak made by hand gets the same default
    source = rl.Source("notes", "100 TOPS")
    assert rl.Peak("int8", 1e14, source).accumulate == "int32"
    assert rl.Peak("bf16", 1e14, source).accumulate == "fp32"


def test_v6e_hbm_in_gib_and_dcn_as_google_prints_it():
    v6e = rl.get_chip("TPU v6e")
    # the TPU7x page's table: "HBM capacity per chip (GiB) | 95 | 32 | 192" -> 32 x 2^30 bytes
    assert v6e.hbm_bytes == 32 * 2**30 == 34_359_738_368
    # "Data center network (DCN) bandwidth per chip (Gbps) | 50 | 100 | 100": v6e 100 Gb/s
    # = 100e9 / 8 = 12.5e9 bytes/s per chip one way, 4x the old 2.5e10 / 8 = 3.125e9
    assert v6e.network_bytes_per_s == 12.5e9
    # v5p (50 Gb/s = 6.25e9) and v5e (2 x 100 Gb/s per 8-chip host = 3.125e9) were right
    assert rl.get_chip("TPU v5p").network_bytes_per_s == 50e9 / 8
    assert rl.get_chip("TPU v5e").network_bytes_per_s == 2 * 100e9 / 8 / 8


def test_tpu7x_ici_as_printed_on_the_cloud_page():
    link = rl.get_chip("TPU7x").interconnect
    assert link is not None and link.topology == "torus"
    # "Bidirectional inter-chip interconnect (ICI) bandwidth per chip (GBps) | 1200 | 800 | 1200"
    assert "1200" in link.source.says and "tpu7x" in link.source.url
    # all links both ways = the printed 1200 GB/s; one link one way: 1200 / 6 / 2 = 100 GB/s
    assert link.bidirectional_total_bytes_per_s == pytest.approx(1200e9)
    assert link.one_way_bytes_per_s == pytest.approx(100e9)
    assert "6" in link.source.derivation and "assum" in link.source.derivation


def test_b200_memory_from_the_hgx_totals():
    b200 = rl.get_chip("B200")
    # HGX B200 (8 GPUs): "Total Memory 1.4TB", "Memory Bandwidth 62TB/s": 175 GB, 7.75 TB/s each
    assert b200.hbm_bytes == pytest.approx(1.4e12 / 8) == 175e9
    assert b200.hbm_bytes_per_s == pytest.approx(62e12 / 8)
    assert "1.4TB" in b200.memory_source.says and "/ 8" in b200.memory_source.derivation
    # bf16 ridge: 2250e12 / 7.75e12 = 290.3 FLOPs/B
    assert rl.critical_intensity("B200") == pytest.approx(290.32, abs=0.01)


def test_vector_rates_of_turing_and_blackwell():
    # T4: "Single-Precision: 8.1 TFLOPS"; Turing runs fp16 at twice fp32: 16.2 TFLOP/s
    assert rl.get_chip("T4").peak_flops_per_s("fp16", unit="vector") == pytest.approx(16.2e12)
    # B200: FP32 600 TFLOPS / 8 = 75, bf16 twice that: 150; GB200: 5,760 / 72 = 80 -> 160
    assert rl.get_chip("B200").peak_flops_per_s("bf16", unit="vector") == pytest.approx(150e12)
    assert rl.get_chip("GB200").peak_flops_per_s("bf16", unit="vector") == pytest.approx(160e12)


def test_colab_a100_40gb_has_its_own_entry():
    chip = chip_for_device("NVIDIA A100-SXM4-40GB")
    assert chip is not None and chip.name == "A100 SXM 40GB"
    assert chip_for_device("NVIDIA A100-SXM4-80GB").name == "A100 SXM"
    assert rl.get_chip("a100").name == "A100 SXM"  # the 80GB keeps its names
    # A100 datasheet: 40GB HBM2 at 1,555GB/s; same 312 TFLOPS dense bf16
    assert chip.hbm_bytes == 40e9 and chip.hbm_bytes_per_s == 1555e9
    assert chip.peak_flops_per_s("bf16") == 312e12
    # ridge: 312e12 / 1555e9 = 200.6 FLOPs/B, against the 80GB's 312e12 / 2039e9 = 153.0
    assert rl.critical_intensity(chip) == pytest.approx(200.64, abs=0.01)


def test_l40s_and_trainium2_as_printed():
    l40s = rl.get_chip("L40S")
    # "BFLOAT16 Tensor Core: 362.05 | 733 TFLOPS*" (dense | sparse), 864GB/s: ridge 419.0
    assert l40s.peak_flops_per_s("bf16") == pytest.approx(362.05e12)
    assert l40s.peak_flops_per_s("bf16", sparse=True) == pytest.approx(733e12)
    assert rl.critical_intensity(l40s) == pytest.approx(362.05e12 / 864e9)
    assert chip_for_device("NVIDIA L40S") is l40s
    trn2 = rl.get_chip("trn2")
    # "667 BF16/FP16/TF32 TFLOPS", "96GiB and bandwidth of 2.9TB/s": ridge 667 / 2.9 = 230.0
    assert trn2.peak_flops_per_s("bf16") == 667e12 and trn2.hbm_bytes == 96 * 2**30
    assert rl.critical_intensity(trn2) == pytest.approx(230.0)


def test_all_bandwidths_figure_draws_nvlink_per_gpu_above_pcie():
    # through NVSwitch one transfer gets all 18 links: 18 x 25 GB/s = 450 GB/s one way, above
    # PCIe Gen5 x16 (16 x 32 GT/s x 128/130 / 8 = 63.0 GB/s); one link (25 GB/s) was below it
    levels = rl.get_chip("H100 SXM").memory_levels()
    nvlink = {k: v for k, v in levels.items() if k.startswith("NVLink")}
    assert list(nvlink.values()) == [pytest.approx(450e9)]
    assert "all 18 links" in next(iter(nvlink))
    names = list(levels)
    assert names.index(next(iter(nvlink))) < names.index("PCIe Gen5 x16 (one way)")
    # a TPU's neighbour transfer still uses one ICI link: 4.5e10 on a v5e
    assert rl.get_chip("TPU v5e").memory_levels()["ICI (1 link, one way)"] == 4.5e10
    fig = rl.plots.roofline_figure("H100 SXM", bandwidths="all")
    labels = " ".join(t.get_text() for ax in fig.axes for t in ax.texts) + " ".join(
        str(line.get_label()) for ax in fig.axes for line in ax.lines
    )
    assert "all 18 links" in labels


def test_v5p_memory_names_the_google_page_that_disagrees():
    """Google's v5p page prints '95 GB'; its TPU7x page tabulates v5p at '95' GiB. The
    catalog keeps 95e9 bytes and says so (95 x 2^30 = 102.0e9 bytes, 7.4 % more)."""
    import roofline as rl

    chip = rl.get_chip("TPU v5p")
    assert chip.hbm_bytes == 95e9
    derivation = chip.memory_source.derivation
    assert "GiB" in derivation and "102.0e9" in derivation and "7.4 %" in derivation
    assert round(95 * 2**30 / 1e9, 1) == 102.0 and round((2**30 / 1e9 - 1) * 100, 1) == 7.4
