"""`run`: a `python -m roofline ...` command line a reader would type, run in this process with
its output shown (the chapters' worked runs). The subcommands live in `roofline.subcommands`.
"""

from __future__ import annotations

import shlex

from .subcommands import SUBCOMMANDS, Subcommand

__all__ = ["Subcommand", "SUBCOMMANDS", "run"]


PREFIX = ("python", "-m", "roofline")


def run(command_line: str) -> None:
    """Show `command_line` as a reader would type it in a terminal, then run it here.

    The output is what the command prints, and a last line "(exit status N)" when it fails.
    `command_line` must start with `python -m roofline`; quote as in a POSIX shell.
    """
    words = shlex.split(command_line)
    if tuple(words[:3]) != PREFIX:
        raise ValueError(
            f"{command_line!r} is not a `python -m roofline ...` command line; start it with "
            "python -m roofline"
        )
    print("$ " + " ".join(command_line.split()))
    from .__main__ import main

    try:
        status = main(words[3:])
    except SystemExit as stop:  # argparse's --help (0) and usage errors (2)
        status = stop.code if isinstance(stop.code, int) else 1
    if status:
        print(f"(exit status {status})")
