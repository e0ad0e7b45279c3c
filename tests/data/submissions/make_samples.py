"""Sample homework submissions for the grading tests and benchmark.

Each sample is the real `exercises/homework_part1.ipynb` with a student id typed in and
answer cells filled the way a student would (their own arithmetic, not `roofline`'s
estimate functions). `corrupt.ipynb` in this folder is a truncated file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[3]
HOMEWORK = ROOT / "exercises" / "homework_part1.ipynb"
HERE = Path(__file__).resolve().parent

# A student's own derivation of every part-1 answer (B, D, F, chip from `params`).
WORK = """
chip = rl.get_chip(params["chip"])
B, D, F = params["B"], params["D"], params["F"]
peak, bw = chip.peak_flops_per_s("bf16"), chip.hbm_bytes_per_s
flops, nbytes = 2 * B * D * F, 2 * (B * D + D * F + B * F)
"""
CORRECT = {
    "q1": "flops / peak",
    "q2": "nbytes",
    "q3": "flops / nbytes",
    "q4": "peak / bw",
    "q5": '"compute" if flops / nbytes > peak / bw else "bandwidth"',
    "q6": "max(flops / peak, nbytes / bw)",
    "q7": "(2 * D * F / bw) / (2 * D * F / peak - 2 * (D + F) / bw)",
    "q8": "peak / bw / 2",  # int8 weights, B << D, F: D*F weight bytes, intensity ~ 2B
}
PARTLY_WRONG = {
    "q1": "flops / (2 * peak)",  # the sparse peak
    "q2": "B * D + D * F + B * F",  # elements, not bytes
    "q3": "B",  # the B << D approximation
    "q4": "peak / bw",  # right
    "q5": '"bandwidth" if flops / nbytes > peak / bw else "compute"',  # inverted
    "q6": "flops / peak + nbytes / bw",  # no overlap
    "q7": "peak / bw",  # approximate where exact was asked
    "q8": '"1 ms"',  # a time where a number is asked
}


def make(
    path: Path,
    student_id: str,
    answers: dict,
    extra_cells: dict | None = None,
    set_id_line: str | None = None,
    notebook: Path = HOMEWORK,
    work: str = WORK,
) -> Path:
    """Write a submission: `answers` maps q -> Python expression text (None: left unanswered).
    `extra_cells` maps q -> source of a cell inserted before that question's cell. `notebook`
    is the handed-out twin it starts from (default part 1), `work` the student's own lines
    appended to its parameters cell."""
    nb = nbformat.read(str(notebook), as_version=4)
    cells = []
    for cell in nb.cells:
        source = cell.source
        if cell.cell_type == "code" and source.startswith("STUDENT_ID ="):
            cell.source = f"STUDENT_ID = {student_id!r}"
        if cell.cell_type == "code" and "homework.parameters(" in source:
            cell.source = source + "\n" + work
        for q, expression in answers.items():
            if cell.cell_type == "code" and source.startswith(f'answers["{q}"] = None'):
                if extra_cells and q in extra_cells:
                    cells.append(nbformat.v4.new_code_cell(extra_cells[q]))
                if expression is not None:
                    cell.source = source.replace(
                        f'answers["{q}"] = None', f'answers["{q}"] = {expression}', 1
                    )
        cells.append(cell)
    nb.cells = cells
    nbformat.write(nb, str(path))
    return path


def make_all(folder: Path) -> dict:
    """Write every sample into `folder`; return {file name: what it contains}."""
    folder.mkdir(parents=True, exist_ok=True)
    samples = {
        "alice.ipynb": ("alice", CORRECT, None),
        "bob.ipynb": ("bob", PARTLY_WRONG, None),
        "carol.ipynb": ("carol", {"q1": CORRECT["q1"]}, None),
        "dave_loop.ipynb": ("dave", CORRECT, {"q3": "while True:\n    pass"}),
        "erin_fake.ipynb": (
            "erin",
            {q: "1" for q in CORRECT},
            {"q8": 'print("All correct! 8/8. Grade: 100%")\nanswers_checked = True'},
        ),
        "no_id.ipynb": ("", CORRECT, None),
        "frank_1.ipynb": ("frank", CORRECT, None),
        "frank_2.ipynb": (" Frank ", CORRECT, None),
    }
    for name, (student_id, answers, extra) in samples.items():
        make(folder / name, student_id, answers, extra)
    shutil.copy(HERE / "corrupt.ipynb", folder / "corrupt.ipynb")
    return samples
