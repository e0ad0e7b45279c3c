"""Sphinx extension for the book's web edition (`_config.yml`, `sphinx.local_extensions`).

Book-only code: it lives in the book's `_ext/` folder, not in the `roofline` package a
student installs. It does five things.

1. No sphinx-thebe. Jupyter Book 1 always loads sphinx-thebe, even with
   `launch_buttons.thebe: false`. sphinx-thebe adds an inline script
   `const THEBE_JS_URL = "https://unpkg.com/..."` during `env-before-read-docs`; Sphinx 7 puts
   a JS file added at that point both in its registry and in the already initialised HTML
   builder, so every page carries the script twice and the browser throws "Identifier
   'THEBE_JS_URL' has already been declared". The book does not use Thebe (readers run
   chapters in Colab), so its event handlers and stylesheet are dropped: no thebe script,
   no reference to unpkg.com, no JavaScript error. The `thebe-button` directive stays
   registered, so nothing that names it breaks the build.

2. No saved ipywidgets state: MyST-NB embeds it in a page whose notebook showed an explorer
   (a JSON blob of ~70 kB per explorer that only the ipywidgets JavaScript manager could use,
   and the book loads no such manager: each explorer draws itself in the browser).

3. Icons without Font Awesome's script. pydata-sphinx-theme loads `fontawesome.js` on every
   page (1.5 MB, 0.54 MB gzip-compressed: every Font Awesome icon as SVG, swapped in by
   script). The theme's stylesheet already draws the same icons from Font Awesome's fonts
   (`.fa-bars:before {content: "\\f0c9"}` with `font-family: "Font Awesome 6 Free"`), so the
   script is not needed. After the build, this extension removes that script from every page
   and writes `_static/roofline-icons.css`: the same font families, redeclared with fonts cut
   down (fontTools, a matplotlib dependency) to the glyphs the built site uses (the icon
   classes in its pages and the theme's scripts, and the glyphs the book theme's stylesheet
   names, such as the admonition icons). A later `@font-face` with the same family and weight
   is tried first, so a page loads a few kB of fonts instead of the script or the 0.3 MB full
   fonts (a glyph missing from the cut-down font would make the browser fetch the full one:
   tests/test_browser.py fails on any request for the theme's Font Awesome files).

4. One copy of the answer boxes' script per page. In a notebook each answer box carries its
   own copy of `roofline/web/answerbox.js` (Colab shows every output in a frame of its own);
   on a page of the web edition those copies are dropped and `_static/roofline-answerbox.js`
   is loaded once (chapter 4 has nine boxes: nine copies of 27 kB before).
5. Formulas that are not Tab stops. MathJax 3's context menu (its `ui/menu` component, part of
   `tex-chtml.js`) gives every formula `tabindex="0"`, so a keyboard reader tabbed through every
   formula on the way to the next link or control (issue 25: 161 of the 246 Tabs to chapter
   6's explorer). `options.enableMenu: false` drops the menu and its Tab stops; the assistive
   MathML that screen readers read (`a11y/assistive-mml`) stays on.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

THEBE_MODULE = "sphinx_thebe"
ICON_CSS = "roofline-icons.css"
ICON_DIR = "roofline-icons"
ANSWERBOX_JS = "roofline-answerbox.js"

# The theme's script tag (pydata-sphinx-theme's webpack-macros.html, head_js_preload()).
_FA_SCRIPT = re.compile(
    r'[ \t]*<script\b[^>]*\bsrc="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*>'
    r"\s*</script>\n?"
)
_CLASS_ATTR = re.compile(r'class="([^"]*\bfa[a-z-]*\b[^"]*)"')
# One rule of the theme's Font Awesome CSS: ".fa-bars:before,.fa-navicon:before{content:"\f0c9"}"
_FA_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:{1,2}before,?)+)\{content:"\\([0-9a-f]+)"\}')
# A Font Awesome font (family, weight) -> the theme's TrueType file of it.
FONTS = {
    ("Font Awesome 6 Free", 900): "fa-solid-900.ttf",
    ("Font Awesome 6 Free", 400): "fa-regular-400.ttf",
    ("Font Awesome 6 Brands", 400): "fa-brands-400.ttf",
}
SOLID, REGULAR, BRANDS = FONTS
# Class names that set the style or the size of an icon, not which icon.
_MODIFIERS = re.compile(
    r"fa-(solid|regular|brands|classic|sharp|light|thin|duotone|lg|sm|xs|2xs|xl|2xl|"
    r"\d+x|fw|li|ul|border|pull-\w+|spin\w*|pulse|beat\w*|bounce|fade|flip\w*|"
    r"shake|rotate-\w+|stack\w*|inverse|width-auto)$"
)


# ---------------------------------------------------------------- 1 and 2
def _drop_thebe(app) -> None:
    for listeners in app.events.listeners.values():
        listeners[:] = [
            listener
            for listener in listeners
            if getattr(listener.handler, "__module__", "") != THEBE_MODULE
        ]
    app.registry.css_files[:] = [
        (name, attributes)
        for name, attributes in app.registry.css_files
        if "thebe" not in str(name)
    ]
    app.registry.js_files[:] = [
        (name, attributes)
        for name, attributes in app.registry.js_files
        if "thebe" not in str(name) and "THEBE" not in str(attributes.get("body", ""))
    ]


def _drop_widget_state(app, pagename, templatename, context, doctree) -> None:
    metadata = getattr(app.env, "nb_metadata", None) or {}
    metadata.get(pagename, {}).get("js_files", {}).pop("ipywidgets_state", None)


# ---------------------------------------------------------------- 4: MathJax without Tab stops
#: MathJax 3's components the pages use, loaded by its small startup script instead of the
#: combined tex-chtml.js (which adds the 108 kB gzip context menu the book turns off): TeX
#: input (with the same packages as tex-chtml: base, ams, newcommand, autoload, ...), HTML
#: output with its fonts, and the hidden MathML that screen readers read (assistive-mml).
MATHJAX_COMPONENTS = ["input/tex", "output/chtml", "a11y/assistive-mml"]


def _mathjax_without_menu(app, config) -> None:
    mathjax = dict(config.mathjax3_config or {})
    options = dict(mathjax.get("options") or {})
    options["enableMenu"] = False
    mathjax["options"] = options
    loader = dict(mathjax.get("loader") or {})
    loader["load"] = MATHJAX_COMPONENTS
    mathjax["loader"] = loader
    config.mathjax3_config = mathjax
    config.mathjax_path = "mathjax/startup.js"  # sphinx-mathjax-offline names tex-chtml.js


# ---------------------------------------------------------------- after the build
#: Attribute of the Sphinx app: whether this build wrote any page.
_WROTE_PAGES = "_roofline_wrote_pages"


def _note_page_written(app, *args) -> None:
    setattr(app, _WROTE_PAGES, True)


def _already_done(app, *generated: str) -> bool:
    """Whether a build-finished step has nothing to do: this build wrote no page (a no-change
    build, where Sphinx writes and copies nothing, so every page and static file is as the
    last build left it, already processed) and the files the step generates are there (the
    names under `_static`). Skipping saves the no-change build about 0.6 s of font subsetting
    (fontTools) and of importing `roofline` for the answer boxes' script."""
    if getattr(app, _WROTE_PAGES, False):
        return False
    static = Path(app.outdir) / "_static"
    return all((static / name).is_file() for name in generated)


# ---------------------------------------------------------------- 3: icons
def icon_codepoints(theme_css: str) -> dict[str, int]:
    """Icon class name ("fa-bars") -> its character in the Font Awesome fonts, from the theme's CSS."""
    names = {}
    for selectors, code in _FA_RULE.findall(theme_css):
        for name in re.findall(r"\.(fa-[a-z0-9-]+):", selectors):
            names[name] = int(code, 16)
    return names


def icons_in_classes(class_lists: list[str]) -> dict[tuple[str, int], set[str]]:
    """The icon names each font must hold, from the class attributes that name icons."""
    wanted: dict[tuple[str, int], set[str]] = {}
    for classes in class_lists:
        tokens = classes.split()
        if "fab" in tokens or "fa-brands" in tokens:
            font = BRANDS
        elif "far" in tokens or "fa-regular" in tokens:
            font = REGULAR
        else:
            font = SOLID
        for token in tokens:
            if token.startswith("fa-") and not _MODIFIERS.match(token):
                wanted.setdefault(font, set()).add(token)
    return wanted


def glyphs_named_by_css(css: str) -> set[int]:
    """Private-use characters a stylesheet draws by itself, outside the `.fa-*:before` class rules:
    `content: "\\f107"` (the book theme), `--pst-icon-bell: "<U+F0F3>"` (pydata's admonition and
    link icons, written as the character itself)."""
    css = _FA_RULE.sub("", css)
    found = {int(code, 16) for code in re.findall(r'"\\([0-9a-fA-F]{4,5})"', css)}
    found |= {ord(char) for char in re.findall(r'"([\ue000-\uf8ff])"', css)}
    return {code for code in found if 0xE000 <= code <= 0xF8FF}


def _subset(ttf: Path, codepoints: set[int], out: Path) -> None:
    from fontTools import subset  # a matplotlib dependency

    options = subset.Options()
    options.flavor = "woff"  # zlib: no brotli needed (woff2 would need it)
    options.layout_features = []
    options.name_IDs = [
        0,
        1,
        2,
    ]  # keep the copyright and family names (the font's licence: SIL OFL)
    options.notdef_outline = True
    font = subset.load_font(str(ttf), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(codepoints))
    subsetter.subset(font)
    subset.save_font(font, str(out), options)


def _write_icons(app, exception) -> None:
    if exception is not None or app.builder.format != "html" or _already_done(app, ICON_CSS):
        return
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    out = Path(app.outdir)
    static = out / "_static"
    theme_css = static / "styles" / "pydata-sphinx-theme.css"
    webfonts = static / "vendor" / "fontawesome" / "webfonts"
    if not theme_css.is_file() or not webfonts.is_dir():
        logger.warning(
            "web_edition: pydata-sphinx-theme's Font Awesome CSS or fonts are not in "
            f"{static}; the icons cannot be cut down (did the theme change?)"
        )
        return
    codepoints = icon_codepoints(theme_css.read_text(encoding="utf-8"))
    class_lists = []
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        cleaned = _FA_SCRIPT.sub("", text)
        if cleaned != text:
            page.write_text(cleaned, encoding="utf-8")
        class_lists += _CLASS_ATTR.findall(cleaned)
    # icons the theme's scripts add at run time ("fa-solid fa-xmark" in the search dialog)
    for script in (static / "scripts").glob("*.js"):
        class_lists += [
            m
            for m in re.findall(
                r'"((?:fa-[a-z0-9-]+|fa[srb])(?: fa-[a-z0-9-]+)+)"',
                script.read_text(encoding="utf-8", errors="replace"),
            )
        ]
    wanted = {font: set() for font in FONTS}
    for font, names in icons_in_classes(class_lists).items():
        for name in sorted(names):
            if name in codepoints:
                wanted[font].add(codepoints[name])
            else:
                logger.warning(
                    f"web_edition: icon class {name!r} is used in the built site but the "
                    "theme's Font Awesome CSS has no rule for it; use an icon name from "
                    "Font Awesome 6 Free"
                )
    # glyphs the stylesheets name themselves (admonition icons...): kept in every font that has them
    for css in static.rglob("*.css"):
        if css.name != ICON_CSS and "mathjax" not in css.parts:
            named = glyphs_named_by_css(css.read_text(encoding="utf-8", errors="replace"))
            for font in wanted:
                wanted[font] |= named
    (static / ICON_DIR).mkdir(exist_ok=True)
    rules = []
    for (family, weight), ttf in FONTS.items():
        if not wanted[(family, weight)]:
            continue
        woff = Path(ttf).with_suffix(".subset.woff").name
        _subset(webfonts / ttf, wanted[(family, weight)], static / ICON_DIR / woff)
        rules.append(
            f'@font-face {{ font-family: "{family}"; font-style: normal; font-weight: {weight}; '
            f'font-display: block; src: url("{ICON_DIR}/{woff}") format("woff"); }}'
        )
    (static / ICON_CSS).write_text(
        "/* Generated by _ext/web_edition.py: the Font Awesome fonts the theme's CSS uses, cut down\n"
        " * to the glyphs this site shows (replaces the theme's fontawesome.js and full fonts). */\n"
        + "\n".join(rules)
        + "\n",
        encoding="utf-8",
    )


# ---------------------------------------------------------------- 4
def _one_answerbox_script(app, pagename, templatename, context, doctree) -> None:
    """Drop every answer box's inline copy of the checker script from the page and load
    `_static/roofline-answerbox.js` once instead (each box's own copy is for notebooks, where
    every output stands alone); the script initialises every box on the page when it loads."""
    from roofline.exercises.answerbox import SCRIPT_MARK

    body = context.get("body", "")
    if SCRIPT_MARK not in body:
        return
    context["body"] = re.sub(rf"<script {SCRIPT_MARK}>.*?</script>", "", body, flags=re.S)
    app.add_js_file(ANSWERBOX_JS, loading_method="defer")


def _write_answerbox_script(app, exception) -> None:
    if exception is not None or app.builder.format != "html" or _already_done(app, ANSWERBOX_JS):
        return
    from roofline.exercises.answerbox import BOX_SCRIPT

    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    (static / ANSWERBOX_JS).write_text(BOX_SCRIPT, encoding="utf-8")


def _no_unused_design_assets(app, pagename, templatename, context, doctree) -> None:
    """Jupyter Book always loads sphinx-design's stylesheet and tab script (11 kB gzip); a page
    with none of its components (no `sd-` class) does without them."""
    if 'class="sd-' in context.get("body", "") or " sd-" in context.get("body", ""):
        return
    unused = ("sphinx-design", "design-tabs")
    for key in ("css_files", "script_files"):
        if key in context:
            context[key] = [f for f in context[key] if not any(u in str(f) for u in unused)]


# ---------------------------------------------------------------- 5: the search index on demand
_SEARCH_SCRIPT_TAGS = re.compile(
    r'\s*<script src="(?:\.\./)*(?:searchindex\.js|_static/searchtools\.js|_static/language_data\.js)"></script>'
)


def _search_index_only_on_search_page(app, exception) -> None:
    """The theme loads searchindex.js (30 kB gzip) with Sphinx's search code (8 kB) on every
    page for an inline search the book does not use (search_as_you_type is off: the search box
    submits to search.html). Keep them on search.html, which runs the search, and drop them from
    every other page."""
    if exception is not None or app.builder.format != "html" or _already_done(app):
        return
    for page in Path(app.outdir).rglob("*.html"):
        if page.name == "search.html":
            continue
        text = page.read_text(encoding="utf-8")
        lighter = _SEARCH_SCRIPT_TAGS.sub("", text)
        if lighter != text:
            page.write_text(lighter, encoding="utf-8")


def setup(app):
    # the notebooks executed for this site run in kernels that inherit this variable:
    # roofline.exercises shows homework's web answer box there, a kernel verdict elsewhere
    os.environ["ROOFLINE_WEB_EDITION"] = "1"
    # chapter 9 measures the building machine in a few seconds: roofline.measure's "build" mode
    os.environ["ROOFLINE_MEASURE_MODE"] = "build"
    app.setup_extension(THEBE_MODULE)  # make sure it is loaded before its handlers are dropped
    _drop_thebe(app)
    # before MyST-NB's own html-page-context handler (priority 500) adds the page's scripts
    app.connect("html-page-context", _drop_widget_state, priority=400)
    app.connect("html-page-context", _note_page_written)
    # after the theme's stylesheets, so its @font-face rules win; written at build-finished
    app.add_css_file(ICON_CSS, priority=900)
    app.connect("build-finished", _write_icons)
    app.connect("html-page-context", _one_answerbox_script)
    app.connect("html-page-context", _no_unused_design_assets)
    app.connect("build-finished", _write_answerbox_script)
    app.connect("build-finished", _search_index_only_on_search_page)
    app.connect("config-inited", _mathjax_without_menu)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
