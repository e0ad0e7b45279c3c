"""Names the dead-code finder (vulture, tests/test_repo_hygiene.py) reports that are used.

Vulture reads this file (never run) as code that uses each name: one line a name, with
where it lives and why it stays. A name that really is dead is removed from the package,
not added here.
"""
# ruff: noqa: B018

from types import SimpleNamespace

_ = SimpleNamespace()

# Python calls these itself: a module's __getattr__ (roofline/__init__.py, lazy names),
# a context manager's traceback argument (book.expect_error.__exit__), IPython's display hook.
_.__getattr__
_.tb
_._repr_svg_

# TypedDict fields (units.Grammar, exercises.core.FormulaGrammar, measure.matmul.MatmulPlan):
# keys of tables sent as JSON to the answer boxes' script or read by key.
_.short_prefixes
_.long_prefixes
_.exact_units
_.folded_units
_.examples
_.expression_chars
_.infinity
_.approximately
_.chars
_.max_power
_.n_min

# zipfile.ZipInfo's attributes, read by zipfile when it writes (exercises/grader/gradescope.py,
# exercises/grader/wheel.py).
_.external_attr
_.compress_type

# Public properties a reader calls from a notebook, documented in their classes:
# models.ModelConfig, tiles.OnChipMemory, transformer.StepTime.
_.kv_width
_.layer_params
_.forward_flops_per_token
_.total_bytes
_.t_math_s
_.t_comms_s

# published.NIM_SOURCE: a published figure's source, kept beside the figures it quotes.
_.NIM_SOURCE
