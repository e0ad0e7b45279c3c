"""Sphinx extension: make sphinx-exercise's `hide_solutions` also hide gated solutions.

sphinx-exercise 1.x drops a hidden `solution-start` but keeps its `solution-end`
node (the HTML writer then fails: "unknown node type: solution_end_node") and keeps
everything between them, code cells included, so the teacher's book would show the
solutions. With this extension loaded after `sphinx_exercise`, a hidden
`solution-start` leaves a marker, and everything from the marker to the matching
`solution-end` is removed before the page is written.

Loaded for the teacher build only: tools/build_book.py --no-solutions adds it to the
config's `sphinx.local_extensions` (this folder, _ext/, is book-only code: it is not in
the package a student installs).
"""

from __future__ import annotations

from docutils import nodes
from sphinx.transforms import SphinxTransform


class hidden_solution_marker(nodes.Element):
    """Where a hidden gated solution started (removed before writing)."""


class RemoveHiddenGatedSolutions(SphinxTransform):
    default_priority = 5

    def apply(self):
        if not self.config.hide_solutions:
            return
        from sphinx_exercise.nodes import solution_end_node

        for marker in list(self.document.findall(hidden_solution_marker)):
            parent = marker.parent
            start = parent.index(marker)
            end = next(
                (
                    k
                    for k in range(start + 1, len(parent.children))
                    if isinstance(parent.children[k], solution_end_node)
                ),
                None,
            )
            if end is None:
                parent.remove(marker)
                continue
            del parent.children[start : end + 1]


def setup(app):
    from sphinx_exercise.directive import SolutionStartDirective

    class HiddenAwareSolutionStart(SolutionStartDirective):
        def run(self):
            result = super().run()
            if self.env.app.config.hide_solutions:
                return [hidden_solution_marker()]
            return result

    app.setup_extension("sphinx_exercise")
    app.add_node(hidden_solution_marker)
    app.add_directive("solution-start", HiddenAwareSolutionStart, override=True)
    app.add_transform(RemoveHiddenGatedSolutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
