"""Stop early, with a clear message, on a Python the book does not support."""

import sys

NEEDED = (3, 10)
if sys.version_info < NEEDED:
    sys.exit(
        f"This book needs Python {NEEDED[0]}.{NEEDED[1]} or newer; `{sys.executable}` is "
        f"Python {sys.version.split()[0]}. Install a newer Python and run, for example, "
        "`make book PYTHON=python3.11`."
    )
