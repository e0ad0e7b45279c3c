"""The Colab edition runs as a student runs it (issue 14): Colab's package versions, the
package from a built wheel, only the .ipynb files, cell tags ignored, "Run all" top to bottom.

The venv with Colab's pins is made once under _build/colab-venv (a few minutes, from the
package registry) and reused; see tools/colab_check.py.
"""

import sys

import notebooks
import pytest

sys.path.insert(0, str(notebooks.ROOT / "tools"))
import colab_check  # noqa: E402


def test_correct_marker_matches_a_correct_check_and_nothing_else():
    from roofline.exercises import check

    right = check("spec-above-roof", "impossible")
    wrong = check("spec-above-roof", "possible")
    empty = check("spec-above-roof", None)
    assert right.correct and not wrong.correct and not empty.correct
    assert colab_check.CORRECT.search(str(right)) and colab_check.CORRECT.search(
        right._repr_html_()
    )
    for feedback in (wrong, empty):  # the empty one renders the answer box, with its script
        assert not colab_check.CORRECT.search(str(feedback))
        assert not colab_check.CORRECT.search(feedback._repr_html_())


def test_colab_pins_are_what_the_issue_names():
    pins = dict(pin.split("==") for pin in colab_check.COLAB_PINS)
    assert pins["ipywidgets"] == "7.7.1" and pins["ipython"].startswith("7.34")
    assert pins["ipykernel"].startswith("6.17") and pins["numpy"].startswith("2.0.")
    assert pins["matplotlib"].startswith("3.10.") and pins["sympy"].startswith("1.13.")


@pytest.mark.slow
@pytest.mark.xdist_group("colab")
def test_every_twin_runs_all_in_a_colab_like_environment():
    lines = []
    problems = colab_check.check(colab_check.twins(), log=lines.append)
    assert not problems, "\n".join(problems + ["", "log:"] + lines)
    assert sum(line.endswith(": ok") for line in lines) == len(notebooks.notebook_sources())
