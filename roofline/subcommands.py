"""The subcommands of `python -m roofline`, in one table (`--help` and the dispatch in
`roofline.__main__` read it).

    >>> SUBCOMMANDS["model"].help.split(":")[0]
    'a whole model'

`grade` is parsed in full by `roofline.__main__.build_parser`; every other subcommand below
parses its own arguments (module, function) and is imported only when it is called.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

__all__ = ["Subcommand", "SUBCOMMANDS"]


@dataclass(frozen=True)
class Subcommand:
    """A subcommand that parses its own arguments: `module.function(argv) -> int`."""

    module: str  # relative to the `roofline` package, e.g. ".model_cli"
    function: str
    help: str  # one line for `python -m roofline --help`

    def load(self):
        """The function that runs it, imported now (ImportError if its module is absent)."""
        module = importlib.import_module(self.module, package="roofline")
        return getattr(module, self.function)


#: Every subcommand but `grade`, in the order `--help` lists them.
SUBCOMMANDS: dict[str, Subcommand] = {
    "model": Subcommand(
        ".model_cli",
        "main",
        "a whole model: its sizes, a training step on many chips (--train) or serving (--serve)",
    ),
    "measure": Subcommand(
        ".measure.cli", "main", "measure this machine's roofline (and a GPU/TPU if one is seen)"
    ),
    "exam": Subcommand(
        ".exercises.hw_exam",
        "main",
        "the worked exam with one student's numbers (--student ID [--solutions] --out FILE)",
    ),
    "autograder": Subcommand(
        ".exercises.grader.gradescope",
        "main",
        "build a Gradescope autograder zip (--set part1 --out F)",
    ),
    "prairielearn": Subcommand(
        ".exercises.grader.prairielearn",
        "main",
        "export a PrairieLearn externally graded question (--set part1 --out DIR)",
    ),
    "editions": Subcommand(
        ".exercises.edition_maker",
        "main",
        "freeze or check the figures each homework set's numbers are drawn from",
    ),
}
