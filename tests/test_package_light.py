"""`import roofline` stays light: heavy libraries load only when first needed."""
import subprocess
import sys

HEAVY = ("sympy", "matplotlib", "ipywidgets", "IPython", "numpy", "scipy", "pandas")


def test_import_roofline_loads_no_heavy_library():
    code = ("import sys, roofline; roofline.get_chip('H100'); "
            "roofline.estimate(roofline.matmul(8, 16, 32), 'v5e'); "
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", f"import roofline loaded {out.stdout.strip()}"


def test_lazy_submodules_resolve():
    code = "import roofline; roofline.exercises.check; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]
