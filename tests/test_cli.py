"""`python -m roofline`: one table of subcommands, every one listed by --help, and `run`, the
chapters' way of showing a command line and its output."""

import re
import subprocess
import sys

import pytest

from roofline.__main__ import build_parser, main
from roofline.cli import SUBCOMMANDS, run


def _choices():
    """The subcommands the parser registers, read from the parser itself."""
    (action,) = [a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction"]
    return action


def test_usage_line_names_every_registered_subcommand():
    action = _choices()
    usage = build_parser().format_usage()
    listed = re.search(r"\{([a-z,]+)\}", usage).group(1).split(",")
    assert listed == list(action.choices)
    # every command main() dispatches is registered, and nothing else is
    assert set(action.choices) == {"grade", *SUBCOMMANDS}
    assert "model" in listed and "editions" in listed  # the two the old usage line left out
    helps = {a.dest: a.help for a in action._choices_actions}
    for name in action.choices:
        assert helps[name] and "\n" not in helps[name], name


def test_help_from_a_terminal_lists_model():
    result = subprocess.run(
        [sys.executable, "-m", "roofline", "--help"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0
    assert "model" in result.stdout.split("...")[0]  # in the usage line itself


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_every_subcommand_can_be_loaded(name):
    assert callable(SUBCOMMANDS[name].load())


def test_run_shows_the_command_line_then_its_output(capsys):
    run('python -m roofline model "Llama 3 8B"')
    out = capsys.readouterr().out
    assert out.startswith('$ python -m roofline model "Llama 3 8B"\n')
    # Llama 3 8B: 32 layers of d_model 4096 (its config.json: num_hidden_layers 32,
    # hidden_size 4096)
    assert re.search(r"layers\s+32\n", out) and re.search(r"d_model\s+4096\n", out)
    assert "exit status" not in out


def test_run_reports_a_failing_command_and_refuses_other_programs(capsys):
    run("python -m roofline model NoSuchModel")
    assert capsys.readouterr().out.rstrip().endswith("(exit status 2)")
    run("python -m roofline model --help")
    assert "exit status" not in capsys.readouterr().out  # --help exits 0
    with pytest.raises(ValueError, match="start it with python -m roofline"):
        run("rm -rf /")


def test_main_runs_a_registered_subcommand_in_process(capsys):
    assert main(["model", "Llama 3 8B"]) == 0
    assert "Model Llama 3 8B" in capsys.readouterr().out
