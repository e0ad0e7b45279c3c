"""Sphinx extension for the book's web edition (listed in `_config.yml`, `sphinx.extra_extensions`).

Jupyter Book 1 always loads sphinx-thebe, even with `launch_buttons.thebe: false`.
sphinx-thebe adds an inline script `const THEBE_JS_URL = "https://unpkg.com/..."`
during `env-before-read-docs`; Sphinx 7 puts a JS file added at that point both in
its registry and in the already initialised HTML builder, so every page carries the
script twice and the browser throws "Identifier 'THEBE_JS_URL' has already been
declared". The book does not use Thebe (readers run chapters in Colab), so this
extension disconnects sphinx-thebe's event handlers and drops its stylesheet: no
thebe script, no reference to unpkg.com, no JavaScript error. The `thebe-button`
directive stays registered, so nothing that names it breaks the build.

It also drops the saved ipywidgets state that MyST-NB embeds in a page whose notebook
showed an explorer (a JSON blob of ~70 kB per explorer that only the ipywidgets
JavaScript manager could use, and the book loads no such manager: each explorer
brings its own static, still-interactive fallback instead).

It lives in the package (not in a local folder) so that every build finds it,
including the teacher build, whose `_config.yml` is written to a temporary folder.
"""

from __future__ import annotations

THEBE_MODULE = "sphinx_thebe"


def _drop_thebe(app) -> None:
    for listeners in app.events.listeners.values():
        listeners[:] = [listener for listener in listeners
                        if getattr(listener.handler, "__module__", "") != THEBE_MODULE]
    app.registry.css_files[:] = [(name, attributes) for name, attributes in app.registry.css_files
                                 if "thebe" not in str(name)]
    app.registry.js_files[:] = [(name, attributes) for name, attributes in app.registry.js_files
                                if "thebe" not in str(name)
                                and "THEBE" not in str(attributes.get("body", ""))]


def _drop_widget_state(app, pagename, templatename, context, doctree) -> None:
    metadata = getattr(app.env, "nb_metadata", None) or {}
    metadata.get(pagename, {}).get("js_files", {}).pop("ipywidgets_state", None)


def setup(app):
    app.setup_extension(THEBE_MODULE)  # make sure it is loaded before its handlers are dropped
    _drop_thebe(app)
    # before MyST-NB's own html-page-context handler (priority 500) adds the page's scripts
    app.connect("html-page-context", _drop_widget_state, priority=400)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
