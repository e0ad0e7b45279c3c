"""Every glossary word is linked where a page first uses it (issue 33, section 2): the rule,
checked by tests/test_glossary_first_use.py, and a fixer.

The promise checked is the intro's: every word "is defined in the glossary and linked where each
page first uses it" ("each page links a word there where it first appears on that page"). Readers
land on any page, so a word linked in chapter 3 still gets its link at its first use in chapter 7.
What it cannot check is that the glossary has every word a newcomer needs: add an entry, and the
test then finds every page that uses the word before linking it.

The rule, exactly:
- The pages are the book's MyST sources in `_toc.yml` order, all but the reference pages
  (the glossary itself and the generated formula sheet).
- A glossary *entry* is one definition with its term lines ("FLOP" / "FLOPs" is one entry). Its
  forms are those lines and their regular plurals ("collective" -> "collectives", "GEMM" ->
  "GEMMs"). Words with a capital letter ("HBM", "NVLink", "STREAM") match with their case, the
  others in any case; a longer term wins over a shorter one inside it ("KV cache" is not a use of
  "cache"), and the text of a `{term}` link counts only as its target.
- A *use* is a form in the page's prose. Not prose: front matter, code cells and code blocks,
  math, inline code, other roles (`{doc}`, `{ref}`, `{numref}`, `{glue:text}`), URLs, HTML,
  labels, headings, directive titles and options (a title names a topic; the sentence under it
  carries the link). A form joined to another word by a hyphen ("HBM-bound") is not a use.
- The first use of each entry on a page must be a `{term}` link to that entry. "Going further"
  sections (optional, collapsed on the web) are skipped by some readers: a link inside one does
  not count for the core path after it, and a use inside one needs a link unless the core path
  above it or the section itself has linked the word already. The phrases in
  `EVERYDAY` are skipped: there the word has another meaning than the glossary's ("its slice of
  the weights", a "cache" that is the KV cache).

    python tools/glossary_words.py          # list each first use that is not a link
    python tools/glossary_words.py --fix    # make each of them a {term} link, in place

`--fix` writes {term}`word` (or {term}`words <word>` for a plural or another case); read its diff:
where a word has its everyday meaning, undo the link and add the phrase to EVERYDAY instead.
Exit status 1 when a first use is not a link (without --fix).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import notebooks

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "_ext"))
from going_further import optional_spans  # noqa: E402  (the one rule for optional sections)

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "glossary.md"
#: Reference pages read by lookup, not in order: the glossary itself and the formula sheet (a
#: table written by roofline/formula_sheet.py, each row naming the chapter that defines it).
REFERENCE = {GLOSSARY, ROOT / "formula_sheet.md"}
PAGES = [p for p in notebooks.toc_documents() if p not in REFERENCE and p.exists()]

#: Where a glossary word has another meaning than the glossary's: entry (its first term line, lower
#: case) -> a regex; a use is skipped where a match of it in the line covers the word's start.
EVERYDAY: dict[str, str] = {
    # "cache" alone is the KV cache of chapters 7 and 12 unless a CPU's cache is meant
    "cache": r"(?<!L1 )(?<!L2 )(?<!L3 )(?<!CPU )(?<!CPU's )(?<!GPU's )(?<!last-level )"
    r"\bcaches?\b(?! (level|line|size|hierarch))",
    "kernel": r"\(no kernel\)",  # Jupyter's kernel: "On this web page (no kernel)"
    "head": r"output heads?",  # the model's last matmul, not an attention head
    "training": r"MLPerf Training",  # the benchmark's name
    "transformer": r"Parallelize a Transformer",  # another book's section title
    "host": r"virtual machine.{0,60}host",  # the machine under a VM
    "link": r"\blinks? (each|to) (source|page|the glossary)",  # hyperlinks
    "slice": r"\b(its|their|own|weight|that|this) slices?\b|slices? of (the|its|a|an|each|every)\b"
    r"|\bthe slice(?= {3,})",  # "the slice $[B, D]$": a piece of an array
}


@dataclass(frozen=True)
class Entry:
    terms: tuple[str, ...]  # the term lines as written

    @property
    def name(self) -> str:
        return self.terms[0]


def glossary_entries(text: str) -> list[Entry]:
    """The entries of the `{glossary}` block: runs of unindented lines, each run one entry."""
    block = re.search(r"```\{glossary\}\n(.*?)\n```", text, flags=re.S)
    assert block, "glossary.md has no {glossary} block"
    entries, run = [], []
    for line in block.group(1).splitlines():
        if line.strip() and not line[0].isspace():
            run.append(line.strip())
        elif run:
            entries.append(Entry(tuple(run)))
            run = []
    if run:
        entries.append(Entry(tuple(run)))
    return entries


def plurals(term: str) -> list[str]:
    """The term and its regular plural ("collective(s)", "batch(es)", "GEMM(s)")."""
    if term.endswith(("s", "x", "ch", "sh")):
        return [term] if term[-1] == "s" else [term, term + "es"]
    if term.endswith("y") and term[-2:-1] not in "aeiou":
        return [term, term[:-1] + "ies"]
    return [term, term + "s"]


def term_pattern(entries: list[Entry]) -> tuple[re.Pattern[str], dict[str, Entry]]:
    """One regex over every form of every entry (longest first), and form -> entry."""
    forms: dict[str, Entry] = {}
    for entry in entries:
        for term in entry.terms:
            for form in plurals(term):
                key = form if form != form.lower() else form.lower()
                forms.setdefault(key, entry)
    alternatives = []
    for form in sorted(forms, key=len, reverse=True):
        body = re.escape(form)
        alternatives.append(body if form != form.lower() else f"(?i:{body})")
    return re.compile(r"(?<![\w-])(?:" + "|".join(alternatives) + r")(?![\w-])"), forms


def lookup(forms: dict[str, Entry], word: str) -> Entry | None:
    return forms.get(word) or forms.get(word.lower())


# ---------------------------------------------------------------- the page's prose, masked
_MASKS = [
    re.compile(r"\{(?!term\})[\w:-]+\}`[^`]*`"),  # other roles: {doc}, {ref}, {glue:text}, ...
    re.compile(r"``[^`]+``|`[^`]+`"),  # inline code
    re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$"),  # math
    re.compile(r"\]\([^)]*\)"),  # a markdown link's target (its text stays prose)
    re.compile(r"<https?://[^>]*>|https?://\S+"),  # URLs
    re.compile(r"<!--.*?-->|</?[A-Za-z][^>]*>"),  # HTML
]
_TERM_ROLE = re.compile(r"\{term\}`([^`]*)`")
_FENCE = re.compile(r"^\s*(`{3,}|:{3,})\s*(\{[^}]*\})?(.*)$")
_PROSE_DIRECTIVES_SKIP = {"{code-cell}", "{math}", "{raw}", "{glossary}"}


def _mask(text: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


_INDENTED_CODE = re.compile(r"^ {4,}(?![-*+] |\d+[.)] )\S")


def _list_item_before(lines: list[str], index: int) -> bool:
    """Whether the paragraph before lines[index] (a blank line) belongs to a list, so that
    an indented line after it continues the item rather than starting a code block."""
    j = index - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    while j >= 0 and lines[j].strip():
        if re.match(r"^\s*([-*+]|\d+[.)])\s", lines[j]):
            return True
        j -= 1
    return False


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, the line with everything that is not prose blanked out, columns kept)."""
    lines = text.split("\n")
    out: list[tuple[int, str]] = []
    i = 0
    if lines and lines[0].strip() == "---":  # front matter
        i = lines.index("---", 1) + 1 if "---" in lines[1:] else len(lines)
    stack: list[tuple[str, bool]] = []  # open fences: (closing fence, is code)
    in_options = False
    in_comment = False
    in_display_math = False
    in_inline_math = False  # a $...$ that goes on over a line break
    indented_code = False  # a block of lines indented 4 spaces after a blank line: code
    while i < len(lines):
        line, number = lines[i], i + 1
        i += 1
        previous_blank = i < 2 or not lines[i - 2].strip()
        if not stack or not stack[-1][1]:
            starts_code = previous_blank and _INDENTED_CODE.match(line) is not None
            indented_code = (indented_code and (not line.strip() or line.startswith("    "))) or (
                starts_code and not _list_item_before(lines, i - 2)
            )
            if indented_code:
                continue
        fence = _FENCE.match(line)
        if stack and stack[-1][1]:  # inside code: only its closing fence matters
            if line.strip() == stack[-1][0]:
                stack.pop()
            continue
        if fence and stack and line.strip() == stack[-1][0]:
            stack.pop()
            continue
        if fence and (fence.group(2) or fence.group(1)[0] == "`"):
            directive = fence.group(2) or ""
            is_code = directive in _PROSE_DIRECTIVES_SKIP or not directive
            stack.append((fence.group(1), is_code))
            in_options = not is_code
            continue
        if in_options:  # a directive's options: ":class: tip" lines or a --- YAML block
            if line.strip() == "---":
                while i < len(lines) and lines[i].strip() != "---":
                    i += 1
                i += 1
                in_options = False
                continue
            if re.match(r"^\s*:[\w-]+:", line):
                continue
            in_options = False
        if in_comment:
            in_comment = "-->" not in line
            continue
        if line.lstrip().startswith("<!--") and "-->" not in line:
            in_comment = True
            continue
        if line.strip() == "$$" or (line.strip().startswith("$$") and line.count("$$") == 1):
            in_display_math = not in_display_math
            continue
        if in_display_math:
            continue
        if re.match(r"^\s*#{1,6}\s", line) or re.match(r"^\s*\([\w-]+\)=\s*$", line):
            continue  # headings and labels
        if re.match(r"^\s*[+%]{3}", line):  # block breaks, jupytext comments
            continue
        if in_inline_math:  # the rest of a formula begun on an earlier line
            end = line.find("$")
            if end < 0:
                continue
            line = " " * (end + 1) + line[end + 1 :]
            in_inline_math = False
        if len(re.findall(r"(?<![$\\])\$(?!\$)", line.replace("$$", "  "))) % 2:
            in_inline_math = True
            line = line[: line.rindex("$")]
        roles = [(m.start(), m.group(0)) for m in _TERM_ROLE.finditer(line)]
        masked = line
        masked = "".join(
            "\0" if any(s <= k < s + len(r) for s, r in roles) else c for k, c in enumerate(masked)
        )
        for pattern in _MASKS:
            masked = _mask(masked, pattern)
        for start, role in roles:  # the {term} links are prose: put them back
            masked = masked[:start] + role + masked[start + len(role) :]
        out.append((number, masked))
    return out


@dataclass(frozen=True)
class Use:
    line: int
    column: int
    word: str
    entry: Entry
    linked: bool


def uses(text: str, entries: list[Entry]) -> list[Use]:
    """Every use of a glossary word in a page's prose, in reading order."""
    pattern, forms = term_pattern(entries)
    found: list[Use] = []
    for number, line in prose_lines(text):
        for role in _TERM_ROLE.finditer(line):
            inner = role.group(1)
            target = re.search(r"<([^>]+)>\s*$", inner)
            name = (target.group(1) if target else inner).strip()
            entry = next((e for e in entries if name.lower() in (t.lower() for t in e.terms)), None)
            if entry is not None:
                found.append(Use(number, role.start(), inner, entry, True))
        line = _mask(line, _TERM_ROLE)
        for match in pattern.finditer(line):
            entry = lookup(forms, match.group(0))
            if entry is None:
                continue
            if _everyday(entry, line, match.start()):
                continue
            found.append(Use(number, match.start(), match.group(0), entry, False))
    return sorted(found, key=lambda u: (u.line, u.column))


def _everyday(entry: Entry, line: str, start: int) -> bool:
    pattern = EVERYDAY.get(entry.name.lower())
    return bool(pattern) and any(
        m.start() <= start < m.end() for m in re.finditer(pattern, line, flags=re.I)
    )


def section_of_line(text: str) -> list[int]:
    """For each line (index = line number - 1): 0 on the core path, k for the k-th optional
    "Going further" section. A reader may skip every optional section, and may open one alone."""
    starts = [0] * (text.count("\n") + 1)
    for k, (start, end) in enumerate(optional_spans(text), start=1):
        for line in range(text.count("\n", 0, start), text.count("\n", 0, end) + 1):
            starts[line] = k
    return starts


def unlinked_first_uses(text: str, entries: list[Entry]) -> list[Use]:
    """Each use that is the first of its entry for a reader and is not a `{term}` link: on the
    core path, the first use there (a link inside an optional section, which the reader may have
    skipped, does not count); in an optional section, the first use not already linked on the
    core path above it or earlier in the section."""
    section = section_of_line(text)
    linked: set[tuple[str, int]] = set()  # (entry, 0 for the core path or k for section k)
    missed: dict[tuple[str, int], Use] = {}
    for use in uses(text, entries):
        k = section[use.line - 1]
        name = use.entry.name
        if (name, 0) in linked or (name, k) in linked or (name, k) in missed:
            continue
        if use.linked:
            linked.add((name, k))
        else:
            missed[(name, k)] = use
    return sorted(missed.values(), key=lambda u: (u.line, u.column))


def book_entries() -> list[Entry]:
    return glossary_entries(GLOSSARY.read_text(encoding="utf-8"))


def problems() -> list[str]:
    """'page:line: word (glossary: entry)' for each first use on a page that is not a link."""
    entries = book_entries()
    found = []
    for page in PAGES:
        rel = page.relative_to(ROOT).as_posix()
        for use in unlinked_first_uses(page.read_text(encoding="utf-8"), entries):
            found.append(f"{rel}:{use.line}: {use.word!r} (glossary: {use.entry.name!r})")
    return found


def link(use: Use) -> str:
    """The `{term}` role that links `use` to its entry."""
    if use.word.lower() in (t.lower() for t in use.entry.terms):
        return f"{{term}}`{use.word}`"
    target = next(t for t in use.entry.terms if use.word.lower() in map(str.lower, plurals(t)))
    return f"{{term}}`{use.word} <{target}>`"


def fix(page: Path, entries: list[Entry]) -> list[str]:
    """Link each unlinked first use on `page` in place; returns what it could not link (a word
    inside a markdown link's text, which cannot hold a second link)."""
    text = page.read_text(encoding="utf-8")
    lines, left = text.split("\n"), []
    for use in sorted(unlinked_first_uses(text, entries), key=lambda u: (u.line, u.column))[::-1]:
        line = lines[use.line - 1]
        before = line[: use.column]
        if before.count("[") > before.count("]"):
            left.append(f"{page.name}:{use.line}: {use.word!r} is inside a link's text")
            continue
        lines[use.line - 1] = before + link(use) + line[use.column + len(use.word) :]
    if "\n".join(lines) != text:
        page.write_text("\n".join(lines), encoding="utf-8")
    return left


def main(argv: list[str]) -> int:
    if "--fix" in argv:
        entries = book_entries()
        left = [msg for page in PAGES for msg in fix(page, entries)]
        print("\n".join(left) or "every first use is a link now; read the diff")
        return 1 if left else 0
    found = problems()
    print("\n".join(found) or "every glossary word is linked at its first use on every page")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
