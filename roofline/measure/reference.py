"""The reference run chapter 9 quotes: `reference_run.json` (taken by
`tools/measure_reference.py` on a quiet machine) or, without it, the run that built the page.
`page_run` chooses the run the chapter's cells display (the reference on the web page).

Part of `roofline.measure` (the run is in `runner`, which re-exports these names).
"""

from __future__ import annotations

import json
from pathlib import Path

from .result import MeasureResult

REFERENCE_FILE = Path(__file__).with_name("reference_run.json")


def page_example(own: MeasureResult, reference=REFERENCE_FILE) -> tuple[MeasureResult, str]:
    """The run chapter 9's prose quotes, and the words naming its machine.

    The stored reference run (`tools/measure_reference.py`, taken on a quiet machine) when
    the file exists; else `own`, the run that built the page, named as such, with a word on
    how busy its machine was. The prose never calls these figures the reader's own."""
    path = Path(reference)
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        example = MeasureResult.from_dict(data)
        info = data.get("reference", {})
        quiet = "with nothing else running" if info.get("quiet") else "on a busy machine"
        return example, (
            f"the reference machine ({info.get('machine') or example.cpu}, "
            f"{example.threads} BLAS threads, measured {example.date[:10]} in "
            f"{example.settings.get('mode', 'full')} mode {quiet})"
        )
    busy = own.busy_note()
    return own, (
        f"the machine that built this page ({own.cpu}, {own.threads} BLAS "
        f"thread{'s' if own.threads > 1 else ''}, measured while building, "
        f"{own.settings.get('mode', 'full')} mode" + (f"; {busy}" if busy else "") + ")"
    )


def page_run(own: MeasureResult, reference=REFERENCE_FILE) -> MeasureResult:
    """The run chapter 9's cells display: the stored reference run when `own` was measured in
    the book's build (mode "build", a few seconds on a machine running other jobs) and the
    reference file exists, so that the web page's outputs show the figures its prose quotes;
    otherwise `own` (a reader's notebook shows the reader's own run).

    The build's own run still executes (it proves the code works there); the chapter
    summarises it in a sentence."""
    if own.settings.get("mode") != "build" or not Path(reference).is_file():
        return own
    shown = page_example(own, reference)[0]
    if shown.accelerator is None and not shown.accelerator_message:
        shown.accelerator_message = REFERENCE_HAS_NO_ACCELERATOR
    return shown


#: What chapter 9's accelerator cell prints on the web page (the reference run measured a CPU).
REFERENCE_HAS_NO_ACCELERATOR = (
    "The reference run measured a CPU only: no GPU or TPU. In Colab, Runtime > Change runtime "
    "type > a GPU or a TPU, then Run all, measures one."
)
