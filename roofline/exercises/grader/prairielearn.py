"""PrairieLearn: an externally graded question that grades a homework notebook.

    python -m roofline prairielearn --set part1 --out DIR [--weights q1=2] [--image NAME]

DIR is laid out as a PrairieLearn course (copy its folders into yours):

    questions/roofline_part1/info.json        gradingMethod External, the image, entrypoint
    questions/roofline_part1/question.html    a file upload (homework_part1.ipynb) and results
    questions/roofline_part1/tests/config.json  set, weights (PrairieLearn copies tests/ to
                                                /grade/tests)
    serverFilesCourse/roofline_grader/run.sh  the entrypoint (/grade/serverFilesCourse/...)
    serverFilesCourse/roofline_grader/roofline-<version>-py3-none-any.whl  this package
    serverFilesCourse/roofline_grader/Dockerfile  an image with the grader's dependencies

In the grading container PrairieLearn puts the student's files in /grade/student, the
question's tests/ in /grade/tests, the listed serverFilesCourse folders in
/grade/serverFilesCourse and the question's data in /grade/data/data.json, runs the entrypoint
and reads /grade/results/results.json (the grader makes that folder): `gradable` (false: not
graded, no attempt counted, `format_errors` say why), `score` in [0, 1], `message`, and
`tests` (one per question: name, points, max_points, message). `--grade-root` (or
PL_GRADE_ROOT) replaces /grade, so the layout can be tried anywhere.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

DEFAULT_IMAGE = "prairielearn/grader-python"
GRADER_FOLDER = "roofline_grader"
# PrairieLearn kills a grading job after its `timeout` (at most 600 s): stop the notebook
# before, so that the answers recorded until then are graded (seconds).
JOB_TIMEOUT_S = 600
LIMITS_NOTEBOOK_S = 480

RUN_SH = """#!/usr/bin/env bash
# PrairieLearn's entrypoint: grade /grade/student/*.ipynb, write /grade/results/results.json.
set -uo pipefail
GRADE="${PL_GRADE_ROOT:-/grade}"
HERE="$(cd "$(dirname "$0")" && pwd)"
if ! python3 -c "import roofline" 2>/dev/null; then  # an image without the package: the wheel
  python3 -m pip install -q --no-index --no-deps "$HERE"/roofline-*.whl >/dev/null 2>&1
fi
python3 -m roofline.exercises.grader.prairielearn run --grade-root "$GRADE" && exit 0
mkdir -p "$GRADE/results"
cat > "$GRADE/results/results.json" <<'EOF'
{"gradable": false, "format_errors": ["The grader could not run in this image (see the job's output); tell your teacher: the image needs the packages of the Dockerfile next to run.sh"]}
EOF
"""

DOCKERFILE = """# An image with everything the grader needs (the grading container has no network):
#   docker build -t YOU/roofline-grader . && docker push YOU/roofline-grader
# then give that name to `python -m roofline prairielearn --image YOU/roofline-grader`.
FROM prairielearn/grader-python
USER root
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends bubblewrap util-linux \\
    && rm -rf /var/lib/apt/lists/*
COPY {wheel} /tmp/
RUN python3 -m pip install --no-cache-dir "/tmp/{wheel}[grade]" && rm /tmp/{wheel}
"""

QUESTION_HTML = """<pl-question-panel>
  <p>Upload your notebook <code>{notebook}</code> (in Colab: File &gt; Download &gt;
  Download .ipynb) after typing your student id in its first cell and running all cells.
  Each question is graded from your own numbers.</p>
</pl-question-panel>
<pl-file-upload file-names="{notebook}"></pl-file-upload>
<pl-submission-panel>
  <pl-external-grader-results></pl-external-grader-results>
  <pl-file-preview></pl-file-preview>
</pl-submission-panel>
"""


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)


def export(set_id: str, out, weights: str | None = None, image: str = DEFAULT_IMAGE) -> Path:
    """Write the PrairieLearn question and grader for homework `set_id` under `out`."""
    import uuid

    from .. import homework
    from .gradebook import parse_weights
    from .wheel import build_wheel

    if set_id not in homework.sets():
        raise ValueError(f"no homework set {set_id!r}; there are {', '.join(homework.sets())}")
    parse_weights(weights, homework.questions(set_id))  # fails here, not in PrairieLearn
    out = Path(out)
    grader = out / "serverFilesCourse" / GRADER_FOLDER
    question = out / "questions" / f"roofline_{set_id}"
    grader.mkdir(parents=True, exist_ok=True)
    for old in grader.glob("roofline-*.whl"):
        old.unlink()
    wheel = build_wheel(grader)
    _write(grader / "run.sh", RUN_SH, 0o755)
    _write(grader / "Dockerfile", DOCKERFILE.format(wheel=wheel.name))
    info = {
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"roofline-homework-{set_id}")),
        "title": f"Rooflines: {homework.get_set(set_id).title}",
        "topic": "Rooflines",
        "type": "v3",
        "singleVariant": True,
        "gradingMethod": "External",
        "externalGradingOptions": {
            "enabled": True,
            "image": image,
            "serverFilesCourse": [f"{GRADER_FOLDER}/"],
            "entrypoint": f"/grade/serverFilesCourse/{GRADER_FOLDER}/run.sh",
            "timeout": JOB_TIMEOUT_S,
        },
    }
    _write(question / "info.json", json.dumps(info, indent=2) + "\n")
    notebook = homework.get_set(set_id).notebook_name()  # the file the students download
    _write(question / "question.html", QUESTION_HTML.format(notebook=notebook))
    config = {"set": set_id, "weights": weights or ""}
    _write(question / "tests" / "config.json", json.dumps(config, indent=1) + "\n")
    return out


def results(rows: list[dict], weights: dict) -> dict:
    """PrairieLearn's results.json from one submission's detailed rows.

    An ERROR row (or no notebook) gives `gradable: false` with the reason in `format_errors`
    (PrairieLearn then counts no attempt and awards nothing); otherwise `score` is the
    weighted fraction of questions right, in [0, 1], with one test per question."""
    from .gradescope import student_message

    tests = []
    for r in rows:
        if "/" in r["exercise"]:
            q = r["exercise"].split("/", 1)[1]
            right = r["correct"] == "yes"
            points = weights.get(q, 1.0)
            message = ("right. " if right else "not right. ") + r["feedback"]
            tests.append(
                {
                    "name": q,
                    "points": points if right else 0.0,
                    "max_points": points,
                    "message": message,
                }
            )
    if not tests:
        error = next((r["feedback"] for r in rows if r["exercise"] == "ERROR"), "")
        message, _ = student_message(error or "no notebook was graded")
        return {"gradable": False, "format_errors": [message], "message": message}
    total = sum(t["max_points"] for t in tests)
    notes = [r["feedback"] for r in rows if r["exercise"] == "NOTE"]
    score = sum(t["points"] for t in tests) / total if total else 0.0
    out = {"gradable": True, "score": min(1.0, max(0.0, score)), "tests": tests}
    out["message"] = "\n".join(notes) if notes else f"{score:.0%} of the points"
    return out


def lock_down(grade: Path) -> None:
    """As root, make the job's files root's alone before any student code runs (the kernels
    run as an unused uid, 64000 + slot): tests/ (config), serverFilesCourse/, data/ and
    results/ 0700, student/ 0700 (the grader copies the notebook before running it)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    for name in ("tests", "serverFilesCourse", "data", "results", "student"):
        path = grade / name
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o700)


def _limits():
    from .sandbox import Limits

    return Limits(cell_s=120, notebook_s=LIMITS_NOTEBOOK_S)


def run(grade_root, sandbox: str = "auto") -> dict:
    """Grade grade_root/student/*.ipynb (the newest counts); write grade_root/results/results.json."""
    from .. import homework
    from .folder import grade_folder
    from .gradebook import parse_weights

    grade = Path(grade_root)
    config = json.loads((grade / "tests" / "config.json").read_text(encoding="utf-8"))
    set_id = config["set"]
    weights = parse_weights(config.get("weights"), homework.questions(set_id))
    (grade / "results").mkdir(parents=True, exist_ok=True)
    lock_down(grade)
    student = grade / "student"
    notebooks = sorted(
        (p for p in student.glob("*") if p.suffix.lower() == ".ipynb" and p.is_file()),
        key=lambda p: (p.lstat().st_mtime, p.name),
    )
    rows: list[dict] = []
    if notebooks:
        hidden = [grade / "results", grade / "tests", grade / "data"]
        every = grade_folder(
            student, set_override=set_id, jobs=1, hidden=hidden, sandbox=sandbox, limits=_limits()
        )
        rows = [r for r in every if r["file"] == notebooks[-1].name]
    result = results(rows, weights)
    with tempfile.NamedTemporaryFile("w", dir=grade / "results", delete=False) as handle:
        json.dump(result, handle, indent=1)
    os.replace(handle.name, grade / "results" / "results.json")
    os.chmod(grade / "results" / "results.json", 0o644)
    return result


def main(argv=None) -> int:
    """`python -m roofline prairielearn --set S --out DIR` (export) and `... run` (grade)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m roofline prairielearn")
    parser.add_argument("action", nargs="?", choices=("export", "run"), default="export")
    parser.add_argument("--set", help="homework set (part1, ...)")
    parser.add_argument("--out", type=Path, default=Path("prairielearn"))
    parser.add_argument("--weights", default=None, help="question weights, e.g. q1=2,q3=0.5")
    parser.add_argument(
        "--image",
        default=DEFAULT_IMAGE,
        help="the grading image (build one from the exported Dockerfile; default "
        f"{DEFAULT_IMAGE}, which must then hold the grader's dependencies)",
    )
    parser.add_argument("--grade-root", default=os.environ.get("PL_GRADE_ROOT", "/grade"))
    parser.add_argument("--sandbox", choices=("auto", "bwrap", "rlimits"), default="auto")
    args = parser.parse_args(argv)
    if args.action == "run":
        result = run(args.grade_root, args.sandbox)
        print(f"gradable {result['gradable']} score {result.get('score', '-')}")
        return 0
    if not args.set:
        parser.error("--set is required (part1, part2, ...)")
    try:
        out = export(args.set, args.out, args.weights, args.image)
    except (ValueError, RuntimeError) as error:
        print(error, file=sys.stderr)
        return 2
    print(
        f"wrote {out}: copy questions/ and serverFilesCourse/ into your PrairieLearn course "
        f"(image {args.image}; see serverFilesCourse/{GRADER_FOLDER}/Dockerfile)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
