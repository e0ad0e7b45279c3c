"""Optional "Going further" sections: collapsed on the web, whole in print and in Colab (issue 33).

A chapter marks a section as optional by its heading alone, at any level below the title:

    ## Going further: the NCCL alpha/beta fit

Everything under that heading (prose, code cells, figures, subsections) down to the next heading
of the same or a higher level is the optional section. A convention in the heading, not a
directive, because a directive cannot wrap code cells, and because the heading says the same
thing in every edition:

- web page (this extension, HTML builds only): the heading stays a visible heading (the page's
  heading list and "On this page" keep it) and the section's body goes into a closed
  ``<details class="rx-going-further">`` whose ``<summary>`` (a native disclosure button: Tab,
  Enter or Space; its focus ring in `_static/roofline-web.css`) says it is optional;
  `_static/roofline-going-further.js` opens it when a link leads into it;
- print and `tools/book_pdf.py` (which prints the site): the print stylesheet shows the body
  and hides the summary (`@media print` in `_static/roofline-web.css`; the script also opens
  every section before printing);
- Colab twin (`tools/notebooks.py`): a plain section; `TWIN_NOTE` is written under its heading.

`is_going_further` is the one rule for which headings open such a section; the twin writer and
the tests (tests/test_going_further.py: no core exercise needs one) use it too.
"""

from __future__ import annotations

import re
from html import escape

from docutils import nodes

#: How an optional section's heading starts (the reader sees it in every edition).
PREFIX = "Going further:"
#: The web page's disclosure button: the heading above it names the section.
SUMMARY = "Optional on a first reading: show or hide this section"
#: Written under an optional section's heading in the Colab twin (which has no collapsing).
TWIN_NOTE = (
    "*Optional on a first reading: the core path and the exercises outside a "
    "\u201cGoing further\u201d section do not need it.*"
)
CSS_CLASS = "rx-going-further"

_HEADING = re.compile(r"^(?P<hashes>#{2,6})[ \t]+(?P<title>.+?)[ \t]*$", re.M)


def is_going_further(title: str) -> bool:
    """Whether a heading's text (without the #s) opens an optional section."""
    return title.strip().startswith(PREFIX)


def optional_spans(markdown: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of every optional section in a MyST text: from its heading
    to the next heading of the same or a higher level (or the end). Headings inside fenced
    blocks (code cells, directives) are not headings."""
    headings = [
        (match.start(), len(match.group("hashes")), match.group("title"))
        for match in _HEADING.finditer(markdown)
        if not _inside_fence(markdown, match.start())
    ]
    spans = []
    for k, (start, level, title) in enumerate(headings):
        if not is_going_further(title) or any(s <= start < e for s, e in spans):
            continue
        end = next((s for s, lv, _ in headings[k + 1 :] if lv <= level), len(markdown))
        spans.append((start, end))
    return spans


def _inside_fence(markdown: str, position: int) -> bool:
    """Whether `position` is inside a ``` or ::: fenced block (an odd number of fences before it)."""
    fences = re.findall(r"^(?:`{3,}|:{3,})", markdown[:position], re.M)
    depth: list[str] = []
    for fence in fences:
        if depth and fence == depth[-1]:
            depth.pop()
        else:
            depth.append(fence)
    return bool(depth)


# ---------------------------------------------------------------- the web page
class going_further(nodes.General, nodes.Element):
    """The body of an optional section (everything under its heading), collapsed on the web."""


def _visit_html(self, node) -> None:
    self.body.append(
        f'<details class="{CSS_CLASS}">'
        f'<summary class="{CSS_CLASS}-summary">{escape(SUMMARY)}</summary>'
        f'<div class="{CSS_CLASS}-body">'
    )


def _depart_html(self, node) -> None:
    self.body.append("</div></details>")


def _pass(self, node) -> None:
    """Other builders: the body as it is (the post-transform adds the node on HTML only)."""


def collapse_optional_sections(document) -> int:
    """Wrap the body of every outermost "Going further:" section in a `going_further` node;
    returns how many."""
    count = 0
    for section in list(document.findall(nodes.section)):
        if not section.children or not isinstance(section[0], nodes.title):
            continue
        if not is_going_further(section[0].astext()):
            continue
        if any(isinstance(a, going_further) for a in _ancestors(section)):
            continue
        body = going_further()
        body.extend(section.children[1:])
        del section.children[1:]
        section.append(body)
        count += 1
    return count


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def setup(app):
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class CollapseOptionalSections(SphinxPostTransform):
        default_priority = 800
        formats = ("html",)

        def run(self, **kwargs) -> None:
            collapse_optional_sections(self.document)

    app.add_node(
        going_further,
        html=(_visit_html, _depart_html),
        latex=(_pass, _pass),
        text=(_pass, _pass),
        man=(_pass, _pass),
        texinfo=(_pass, _pass),
    )
    app.add_post_transform(CollapseOptionalSections)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
