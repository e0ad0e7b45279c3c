"""The printed edition (tools/book_pdf.py, `make pdf`): a book, checked from the file.

Fast tests build small PDFs with pypdf and check the pieces: page numbers (roman front matter,
arabic body), the stamped footers, the links rewritten to jumps inside the PDF, the contents'
page numbers, the edition line. The slow browser test prints the whole built book once and
checks the file a reader gets: page labels, contents, two-level bookmarks, link targets, every
chapter's title, no solution text (issues 25 and 35).
"""

from __future__ import annotations

import io
import re
import unicodedata
from pathlib import Path

import book_pdf
import pytest
from pypdf import PdfReader, PdfWriter
from pypdf.generic import (
    ArrayObject,
    DictionaryObject,
    FloatObject,
    NameObject,
    NullObject,
    TextStringObject,
)

A4_PT = (595.92, 841.92)


# ---------------------------------------------------------------- pieces
@pytest.mark.parametrize(
    ("number", "expected"),
    # by hand: 4 = 5 - 1, 9 = 10 - 1, 14 = 10 + 4, 40 = 50 - 10, 48 = 40 + 5 + 3
    [(1, "i"), (3, "iii"), (4, "iv"), (9, "ix"), (14, "xiv"), (40, "xl"), (48, "xlviii")],
)
def test_roman_numerals(number, expected):
    assert book_pdf.roman(number) == expected


def test_roman_numerals_start_at_one():
    with pytest.raises(ValueError, match="start at 1"):
        book_pdf.roman(0)


def test_chapters_are_numbered_in_reading_order():
    pages = book_pdf.toc_pages()
    numbers = book_pdf.chapter_numbers(pages)
    chapters = [p for p in pages if p.startswith("chapters/")]
    # _toc.yml lists the chapters 01_... to 13_...: numbered 1..13, the file's own prefix
    assert [numbers[p] for p in chapters] == [str(int(Path(p).name[:2])) for p in chapters]
    assert "intro.html" not in numbers and "glossary.html" not in numbers


def test_links_into_the_book_are_recognised():
    assert book_pdf._book_target("http://127.0.0.1:8123/chapters/03_x.html#fig-a") == (
        "chapters/03_x.html",
        "fig-a",
    )
    assert book_pdf._book_target(f"http://{book_pdf.SITE_HOST}/glossary.html") == (
        "glossary.html",
        "",
    )
    assert book_pdf._book_target("https://github.com/jax-ml/scaling-book") is None


def test_edition_names_version_and_commit():
    text = book_pdf.edition()
    assert re.fullmatch(
        r"Edition \d+\.\d+\.\d+\S*, (commit [0-9a-f]{7,} of \d{4}-\d{2}-\d{2}"
        r"( \+ local changes)?|printed outside a git checkout)",
        text,
    ), text


def test_edition_outside_git(tmp_path):
    assert book_pdf.edition(tmp_path).endswith("printed outside a git checkout")


def _link(writer: PdfWriter, page: int, rect, uri: str | None = None, dest: str | None = None):
    annot = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Annot"),
            NameObject("/Subtype"): NameObject("/Link"),
            NameObject("/Rect"): ArrayObject([FloatObject(v) for v in rect]),
        }
    )
    if uri is not None:
        annot[NameObject("/A")] = DictionaryObject(
            {NameObject("/S"): NameObject("/URI"), NameObject("/URI"): TextStringObject(uri)}
        )
    if dest is not None:
        annot[NameObject("/Dest")] = TextStringObject(dest)
    ref = writer._add_object(annot)
    target = writer.pages[page]
    if "/Annots" not in target:
        target[NameObject("/Annots")] = ArrayObject()
    target["/Annots"].append(ref)
    return annot


def test_links_jump_to_the_page_their_target_landed_on():
    writer = PdfWriter()
    for _ in range(4):  # front matter (0), a.html (1, 2), b.html (3)
        writer.add_blank_page(*A4_PT)
    starts = {"a.html": 1, "b.html": 3}
    dests = {("b.html", "sec"): (3, 500.0), ("a.html", "local"): (2, 300.0)}
    owners = [None, "a.html", "a.html", "b.html"]
    to_section = _link(writer, 1, (10, 10, 60, 20), uri="http://127.0.0.1:9/b.html#sec")
    to_page = _link(writer, 0, (10, 10, 60, 20), uri="http://rooflines.invalid/b.html")
    same_chapter = _link(writer, 1, (10, 30, 60, 40), dest="/local")
    outside = _link(writer, 2, (10, 10, 60, 20), uri="https://arxiv.org/abs/2204.02311")
    _link(writer, 2, (0, 0, 1, 1), uri="http://127.0.0.1:9/a.html#local")  # a 1-px anchor
    lost = _link(writer, 3, (10, 10, 60, 20), uri="http://127.0.0.1:9/a.html#gone")

    unresolved = book_pdf.rewrite_links(writer, owners, dests, starts)

    def where(annot):
        dest = annot["/Dest"]
        index = [p.indirect_reference for p in writer.pages].index(dest[0])
        return index, (None if isinstance(dest[3], NullObject) else float(dest[3]))

    assert where(to_section) == (3, 500.0) and "/A" not in to_section
    assert where(to_page)[0] == 3, "a page without an anchor: its first page"
    assert where(same_chapter) == (2, 300.0)
    assert outside["/A"]["/URI"] == "https://arxiv.org/abs/2204.02311", "the web stays the web"
    assert len(writer.pages[2]["/Annots"]) == 1, "the 1-px anchor is gone, the real link kept"
    assert where(lost)[0] == 1 and unresolved == ["a.html#gone"]


def test_stamped_page_number_and_running_head():
    writer = PdfWriter()
    writer.add_blank_page(*A4_PT)
    book_pdf.stamp(writer, 0, "12", "3  The roofline plot")
    buffer = io.BytesIO()
    writer.write(buffer)
    page = PdfReader(buffer).pages[0]
    text = page.extract_text()
    assert "12" in text and "3  The roofline plot" in text
    assert b"/Artifact" in page.get_contents().get_data(), "page numbers are artifacts"


def _fake_chapter(page: str, n_pages: int, sections: dict[str, int], number=None):
    writer = PdfWriter()
    for _ in range(n_pages):
        writer.add_blank_page(*A4_PT)
    for name, index in sections.items():
        writer.add_named_destination(name, index)
    buffer = io.BytesIO()
    writer.write(buffer)
    titled = [(name, f"{number}.{k} {name}") for k, name in enumerate(sections, start=1)]
    return book_pdf.Chapter(page, page.title(), number, titled, PdfReader(buffer))


def test_contents_gives_each_chapter_and_section_its_page():
    intro = _fake_chapter("intro.html", 4, {})
    ch1 = _fake_chapter("chapters/01.html", 8, {"math": 0, "bytes": 2}, number="1")
    html = book_pdf.front_matter_html([intro, ch1], {"chapters/01.html": "Part 1"}, "Edition X")
    rows = re.findall(r'<span class="t">([^<]*)</span><span class="n">(\d+)</span>', html)
    # by hand: the intro takes pages 1-4, chapter 1 starts on 4 + 1 = 5; its section "bytes"
    # is on the chapter's third page (index 2): 5 + 2 = 7
    assert rows == [
        ("Intro.Html", "1"),
        ("1\u2002Chapters/01.Html", "5"),
        ("1.1 math", "5"),
        ("1.2 bytes", "7"),
    ]
    assert "Part 1" in html and "Edition X" in html


# ---------------------------------------------------------------- the whole book, in a browser
def _squash(text: str) -> str:
    """Text compared without spaces, hyphens or ligatures (the PDF's "ﬂ" is "fl")."""
    return re.sub(r"[\s\u00ad\u2002-]+", "", unicodedata.normalize("NFKC", text)).lower()


def _page_titles_and_solutions(book_html: Path, pages: list[str]) -> tuple[list[str], list[str]]:
    """Each page's heading and the plain-text sentences of its solutions, read from the HTML."""
    from bs4 import BeautifulSoup

    titles, solutions = [], []
    for page in pages:
        soup = BeautifulSoup((book_html / page).read_text(encoding="utf-8"), "html.parser")
        titles.append(soup.select_one("article h1").get_text(" ", strip=True).rstrip("#¶ "))
        for solution in soup.select(".solution"):
            for paragraph in solution.select("p:not(.admonition-title)"):
                if not paragraph.select(".math, code") and len(paragraph.get_text()) > 40:
                    solutions.append(paragraph.get_text(" ", strip=True)[:60])
    return titles, solutions


def _structure(reader: PdfReader):
    """The structure tree's element types (a Counter) and the object numbers of their pages."""
    from collections import Counter

    kinds: Counter[str] = Counter()
    pages: set[int] = set()
    split_code = 0
    stack = [reader.trailer["/Root"]["/StructTreeRoot"].raw_get("/K")]
    while stack:
        item = stack.pop()
        element = item.get_object()
        if isinstance(element, ArrayObject):
            stack.extend(element)
            continue
        if not isinstance(element, DictionaryObject) or "/S" not in element:
            continue  # a marked-content id, or a reference to a content item or annotation
        kinds[str(element["/S"])] += 1
        if "/Pg" in element:
            pages.add(element.raw_get("/Pg").idnum)
        if element["/S"] == "/Code":
            split_code += len(_content_pages(element, None)) > 1
        if "/K" in element:
            stack.append(element.raw_get("/K"))
    return kinds, pages, split_code


def _content_pages(item, page) -> set:
    """The pages (object numbers) holding the marked content under a structure element."""
    item = item.get_object()
    if isinstance(item, ArrayObject):
        return set().union(*(_content_pages(kid, page) for kid in item))
    if not isinstance(item, DictionaryObject):
        return {page}  # a marked-content id on the element's page
    if item.get("/Type") == "/OBJR":
        return set()
    page = item.raw_get("/Pg").idnum if "/Pg" in item else page
    if item.get("/Type") == "/MCR":
        return {page}
    return _content_pages(item.raw_get("/K"), page) if "/K" in item else set()


@pytest.fixture(scope="module")
def printed(book_html, tmp_path_factory):
    from test_browser import _unavailable

    out = tmp_path_factory.mktemp("pdf") / "rooflines.pdf"
    try:
        labels = book_pdf.build_pdf(book_html, out)
    except SystemExit as error:  # no Chromium
        _unavailable(str(error))
    return labels, PdfReader(str(out))


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.xdist_group("book")
def test_pdf_is_a_book(book_html, printed):
    labels, reader = printed
    pages = book_pdf.toc_pages()
    titles, solutions = _page_titles_and_solutions(book_html, pages)
    numbers = book_pdf.chapter_numbers(pages)
    expected = [
        f"{numbers[p]}\u2002{t}" if p in numbers else t for p, t in zip(pages, titles, strict=True)
    ]

    # bookmarks: "Contents", then one per page of _toc.yml, numbered, each with its sections
    top = [item for item in reader.outline if not isinstance(item, list)]
    assert [item.title for item in top] == ["Contents", *expected] and labels == expected
    children = [item for item in reader.outline if isinstance(item, list)]
    assert len(children) >= 13, "every chapter has its sections as bookmarks"
    assert all(not isinstance(sub, list) for group in children for sub in group), "two levels"
    first_sections = [group[0].title for group in children if group]
    assert any(title.startswith("3.1 ") for title in first_sections), first_sections

    # page labels: i, ii, ... for the front matter, then 1, 2, ... throughout the body
    page_labels = reader.page_labels
    n_front = page_labels.index("1")
    assert page_labels[:n_front] == [book_pdf.roman(k) for k in range(1, n_front + 1)]
    assert page_labels[n_front:] == [str(k) for k in range(1, len(reader.pages) - n_front + 1)]
    # the printed footer says the same number as the label (last chapter's last page)
    assert page_labels[-1] in reader.pages[-1].extract_text().split()

    # title page: the edition; contents: each chapter with the page its bookmark opens
    assert book_pdf.edition().split(",")[0] in reader.pages[0].extract_text()
    contents = _squash("".join(reader.pages[k].extract_text() for k in range(1, n_front)))
    for item, label in zip(top[1:], expected, strict=True):
        start = page_labels[reader.get_destination_page_number(item)]
        assert _squash(label) + start in contents, f"contents: {label} on page {start}"

    # links: none to the server the book was printed from; every jump lands on a page
    internal, glossary_hits = 0, 0
    glossary = next(i for i in top if i.title == "Glossary")
    glossary_start = reader.get_destination_page_number(glossary)
    page_refs = {p.indirect_reference.idnum: k for k, p in enumerate(reader.pages)}
    for index, page in enumerate(reader.pages):
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            action = annot.get("/A")
            if action is not None and action.get("/URI"):
                assert "127.0.0.1" not in str(action["/URI"]), f"page {index}: {action['/URI']}"
            if "/Dest" in annot:
                dest = annot["/Dest"]
                assert isinstance(dest, ArrayObject), "explicit destinations, no names"
                target = page_refs[dest[0].idnum]
                internal += 1
                glossary_hits += target >= glossary_start and index < glossary_start
    # issue 35 counted 728 links into the book (glossary, figures, cross-references)
    assert internal > 600, internal
    assert glossary_hits > 100, "glossary terms jump to the glossary"

    # tags: one structure tree over the whole book, each page's marked content reachable
    root = reader.trailer["/Root"]
    assert root["/MarkInfo"]["/Marked"] and "/StructTreeRoot" in root, "the PDF is tagged"
    kinds, pages_of_elements, split_code = _structure(reader)
    assert kinds["/Part"] == len(pages) + 1, "one Part per printed page and the front matter"
    assert kinds["/H1"] >= len(pages) and kinds["/Figure"] >= 20 and kinds["/Link"] > 600, kinds
    assert pages_of_elements <= set(page_refs), "every element's /Pg is a page of the book"
    nums = root["/StructTreeRoot"]["/ParentTree"]["/Nums"]
    keys = {int(nums[k]) for k in range(0, len(nums), 2)}
    assert all(int(page["/StructParents"]) in keys for page in reader.pages)
    # no page break inside a block of code (print CSS: break-inside: avoid; no cell in the
    # book is longer than a page). This reads the code's text only: an empty frame (a cell's
    # box with none of its lines) is not seen here, the print CSS's break-inside rules hold it
    assert kinds["/Code"] > 100 and split_code == 0, f"{split_code} code blocks span two pages"

    # every chapter's title, and no solution text
    text = _squash("\n".join(page.extract_text() or "" for page in reader.pages))
    missing = [t for t in titles if _squash(t) not in text]
    assert not missing, f"chapter titles not in the PDF's text: {missing}"
    assert solutions, "the book's solutions have plain sentences to look for"
    leaked = [s for s in solutions if _squash(s) in text]
    assert not leaked, f"solution text in the PDF: {leaked[:5]}"


def _tagged_pdf(word: str) -> PdfReader:
    """A one-page PDF tagged as Chromium tags one: Document > P, the P's text marked MCID 0,
    the page's StructParents key 0 in the parent tree."""
    from pypdf.generic import DecodedStreamObject, NumberObject

    writer = PdfWriter()
    page = writer.add_blank_page(*A4_PT)
    content = DecodedStreamObject()
    content.set_data(
        b"/P <</MCID 0>> BDC BT /F1 12 Tf 72 720 Td (" + word.encode() + b") Tj ET EMC"
    )
    page[NameObject("/Contents")] = writer._add_object(content)
    page[NameObject("/StructParents")] = NumberObject(0)
    root = writer._add_object(
        DictionaryObject({NameObject("/Type"): NameObject("/StructTreeRoot")})
    )
    document = writer._add_object(
        DictionaryObject({NameObject("/S"): NameObject("/Document"), NameObject("/P"): root})
    )
    paragraph = writer._add_object(
        DictionaryObject(
            {
                NameObject("/S"): NameObject("/P"),
                NameObject("/P"): document,
                NameObject("/Pg"): page.indirect_reference,
                NameObject("/K"): NumberObject(0),
                NameObject("/Alt"): TextStringObject(word),
            }
        )
    )
    document.get_object()[NameObject("/K")] = ArrayObject([paragraph])
    tree = DictionaryObject(
        {NameObject("/Nums"): ArrayObject([NumberObject(0), ArrayObject([paragraph])])}
    )
    root.get_object()[NameObject("/K")] = document
    root.get_object()[NameObject("/ParentTree")] = writer._add_object(tree)
    writer._root_object[NameObject("/StructTreeRoot")] = root
    buffer = io.BytesIO()
    writer.write(buffer)
    return PdfReader(buffer)


def test_tags_survive_the_merge():
    sources = [_tagged_pdf("first"), _tagged_pdf("second")]
    writer = PdfWriter()
    for source in sources:
        writer.add_page(source.pages[0])
    assert book_pdf.merge_structure(writer, [(sources[0], 0), (sources[1], 1)]) == 2
    buffer = io.BytesIO()
    writer.write(buffer)
    merged = PdfReader(buffer)

    root = merged.trailer["/Root"]
    assert root["/MarkInfo"]["/Marked"], "the file says it is tagged"
    document = root["/StructTreeRoot"]["/K"].get_object()
    parts = [kid.get_object() for kid in document["/K"]]
    assert [part["/S"] for part in parts] == ["/Part", "/Part"], "each printed document a Part"
    # by hand: document 1 keeps key 0, document 2's key 0 becomes 0 + 1 = 1
    keys = [int(page["/StructParents"]) for page in merged.pages]
    assert keys == [0, 1]
    nums = root["/StructTreeRoot"]["/ParentTree"]["/Nums"]
    parent_tree = {int(nums[k]): nums[k + 1] for k in range(0, len(nums), 2)}
    for index, page in enumerate(merged.pages):
        (paragraph,) = parent_tree[keys[index]]
        paragraph = paragraph.get_object()
        assert paragraph.raw_get("/Pg").idnum == page.indirect_reference.idnum, (
            "/Pg: the merged page"
        )
        assert paragraph["/Alt"] == ["first", "second"][index]
        assert paragraph["/P"].get_object()["/S"] == "/Part"
