"""How many of a chapter's numeric exercises can be answered by copying a number the chapter
already prints (a *lookup*), measured on the built book.

An exercise is a lookup when its expected answer appears in its chapter's built page outside
every exercise and solution block (prose, tables, code output), with a compatible unit and
within the exercise's tolerance (at least 0.5 %, the rounding of a printed 3-4 digit value).
Choice and symbolic answers are not counted; a `parts` exercise counts each numeric part.

    python tools/lookup_share.py [_build/html]      # per chapter: numeric, lookups, share

Prints each lookup with the text that gives it away. Exit status 1 when the book's share is
above MAX_SHARE or a chapter's above MAX_CHAPTER_SHARE. Used by tests/test_teaching.py.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from roofline.units import GRAMMAR  # noqa: E402

MAX_SHARE = 0.25  # issue 17: at most a quarter of the book's numeric exercises are lookups
MAX_CHAPTER_SHARE = 0.25  # and per chapter too
MIN_REL_TOLERANCE = 0.005  # a value printed with 3-4 significant digits is this close

#: the unit a printed value must carry to answer an exercise of each kind ("" = a bare number)
KIND_UNITS = {
    "time": ("s",),
    "rate": ("FLOP/s",),
    "bandwidth": ("B/s",),
    "size": ("B",),
    "count": ("FLOPs", "FLOP"),
    "intensity": ("FLOPs/B", "FLOP/B", ""),
    "number": ("", "x"),
}
#: SI prefixes as the package reads them (roofline.units.GRAMMAR), without the binary ones
PREFIXES = {
    "": 1.0,
    **{symbol: factor for symbol, factor, binary in GRAMMAR["short_prefixes"] if not binary},
}
NUMBER = re.compile(
    r"(?<![\w.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?:[eE](?P<exp>[+-]?\d+))?"
    r"(?:\s*(?:×|x|\\times)\s*10\^\{?(?P<exp10>[+-]?\d+)\}?)?"
    r"(?:\s?(?P<prefix>[pnµμumkKMGTPE])?(?P<unit>FLOPs/B|FLOP/B|FLOP/s|FLOPs|FLOP|B/s|B|s)(?![A-Za-z])"
    r"|(?P<times>\s?[x×])(?![\w\d]))?"  # "2x", "4 ×": a multiplier, answers only a ratio
)


@dataclass
class Printed:
    value: float
    unit: str  # "" for a bare number
    context: str
    digits: int = 0  # significant digits as printed ("989.5" 4, "990" 3, "1" 1)


def printed_quantities(text: str) -> list[Printed]:
    """Every number in `text`, with its unit (prefix applied) when one follows it."""
    found = []
    for m in NUMBER.finditer(text):
        value = float(m["num"].replace(",", ""))
        if m["exp"]:
            value *= 10.0 ** int(m["exp"])
        if m["exp10"]:
            value *= 10.0 ** int(m["exp10"])
        unit = "x" if m["times"] else (m["unit"] or "")
        if m["unit"]:
            value *= PREFIXES[m["prefix"] or ""]
        elif m["prefix"]:
            continue  # "16 G" without a unit: not a quantity we compare
        start, end = max(m.start() - 50, 0), min(m.end() + 30, len(text))
        digits = len(m["num"].replace(",", "").replace(".", "").lstrip("0"))
        found.append(Printed(value, unit, " ".join(text[start:end].split()), digits))
    return found


def visible_text_outside_exercises(html: str) -> str:
    """The page's visible text with every exercise, solution and answer box removed."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    for tag in soup.select(
        "div.exercise, div.solution, .roofline-answer-box, nav, footer, "
        "header, .bd-sidebar-primary, .bd-sidebar-secondary"
    ):
        tag.decompose()
    for cell in soup.select("div.cell"):
        if "answer" in cell.get_text() and "check" in cell.get_text():
            cell.decompose()  # an exercise's answer cell: its example answer is a format hint
    main = soup.find("main") or soup
    return main.get_text(" ")


def numeric_answers(exercise) -> list[tuple[str, str, float, float]]:
    """(id, kind, expected value, relative tolerance) of each numeric part of `exercise`."""
    if exercise.kind == "parts":
        return [answer for part in exercise.parts for answer in numeric_answers(part)]
    if exercise.kind not in KIND_UNITS:
        return []
    try:
        value = float(exercise.expected())
    except (TypeError, ValueError):
        return []
    if not math.isfinite(value) or value == 0:
        return []
    return [(exercise.id, exercise.kind, value, max(exercise.tolerance, MIN_REL_TOLERANCE))]


def chapter_exercise_ids(md: Path) -> list[str]:
    """The ids the chapter's exercise cells check (`check("id", answer)`), in order."""
    ids = re.findall(r"""check\(["']([A-Za-z0-9_/-]+)["'],\s*answer\)""", md.read_text("utf-8"))
    return list(dict.fromkeys(ids))


@dataclass
class ChapterShare:
    chapter: str
    numeric: int
    lookups: list[tuple[str, float, str]]  # (exercise id, expected value, giveaway context)

    @property
    def share(self) -> float:
        return len(self.lookups) / self.numeric if self.numeric else 0.0


def chapter_share(md: Path, html_page: Path) -> ChapterShare:
    from roofline.exercises import get_exercise

    printed = printed_quantities(visible_text_outside_exercises(html_page.read_text("utf-8")))
    numeric, lookups = 0, []
    for label in chapter_exercise_ids(md):
        for ex_id, kind, value, tol in numeric_answers(get_exercise(label)):
            numeric += 1
            units = KIND_UNITS[kind]
            hit = next(
                (p for p in printed if p.unit in units and abs(p.value / value - 1) <= tol), None
            )
            if hit is not None:
                lookups.append((ex_id, value, hit.context))
    return ChapterShare(md.stem, numeric, lookups)


def book_shares(html: Path) -> list[ChapterShare]:
    return [
        chapter_share(md, html / "chapters" / f"{md.stem}.html")
        for md in sorted((ROOT / "chapters").glob("*.md"))
    ]


def main(argv: list[str]) -> int:
    html = Path(argv[1]) if len(argv) > 1 else ROOT / "_build" / "html"
    worst = 0.0
    total_numeric = total_lookups = 0
    for share in book_shares(html):
        total_numeric += share.numeric
        total_lookups += len(share.lookups)
        worst = max(worst, share.share)
        print(
            f"{share.chapter}: {share.numeric} numeric, {len(share.lookups)} lookups "
            f"({share.share:.0%})"
        )
        for ex_id, value, context in share.lookups:
            print(f"    {ex_id} = {value:.4g}: ...{context}...")
    print(
        f"book: {total_numeric} numeric, {total_lookups} lookups "
        f"({total_lookups / max(total_numeric, 1):.0%}); limits: book {MAX_SHARE:.0%}, "
        f"chapter {MAX_CHAPTER_SHARE:.0%}"
    )
    too_many = total_lookups > MAX_SHARE * total_numeric or worst > MAX_CHAPTER_SHARE
    return 1 if too_many else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
