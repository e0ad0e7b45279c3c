"""This package as a wheel, written with the standard library alone (zipfile, hashlib).

The Gradescope autograder and the PrairieLearn export ship the package that built them as a
wheel. Building it with setuptools needs setuptools in the venv and, before setuptools 70.1,
the separate `wheel` package, which a venv made as the README says does not have
(`python -m venv` + `pip install -e .`: the build ran in pip's isolated environment). A
pure-Python wheel is a zip (PEP 427): the package's files, `<name>-<version>.dist-info/`
with METADATA (PEP 566: name, version, Requires-Python, Requires-Dist, Provides-Extra),
WHEEL (tag py3-none-any), entry_points.txt and RECORD (each file's sha256, urlsafe base64
without padding, and size). The metadata comes from pyproject.toml (Python >= 3.11 reads it
with tomllib) or, on 3.10, from this installation's own METADATA.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

PACKAGE = "roofline"
# files of the package that go into the wheel (the package data of pyproject.toml's
# [tool.setuptools.package-data]: roofline/web/*.js, measure/*.json, exercises/editions/*.json)
SUFFIXES = (".py", ".js", ".json")


def source_root() -> Path:
    """The checkout this package was imported from (the folder holding pyproject.toml)."""
    import roofline

    root = Path(roofline.__file__).resolve().parent.parent
    if not (root / "pyproject.toml").is_file():
        raise RuntimeError(
            f"no pyproject.toml next to {root / PACKAGE}: build the autograder from a checkout "
            "of the book's repository (pip install -e .)"
        )
    return root


def _requirement_lines(project: dict) -> list[str]:
    lines = [f"Requires-Dist: {r}" for r in project.get("dependencies", [])]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in requirements]
    return lines


def metadata_text(root: Path) -> str:
    """METADATA (core metadata 2.1) from pyproject.toml, or this installation's on 3.10."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the metadata pip wrote at install time
        from importlib import metadata

        try:
            return metadata.distribution(PACKAGE).read_text("METADATA") or ""
        except metadata.PackageNotFoundError:
            raise RuntimeError(
                "cannot read pyproject.toml on Python 3.10 and roofline is not installed: "
                "run pip install -e . first"
            ) from None
    project = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))["project"]
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
    ]
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    return "\n".join(lines + _requirement_lines(project)) + "\n"


def _field(metadata: str, name: str) -> str:
    for line in metadata.splitlines():
        if line.startswith(f"{name}: "):
            return line.split(": ", 1)[1].strip()
    raise RuntimeError(f"the package metadata has no {name} field")


def package_files(root: Path) -> list[Path]:
    """The package's files that go into the wheel, sorted (no caches, no editor leftovers)."""
    return sorted(
        p
        for p in (root / PACKAGE).rglob("*")
        if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts
    )


def record_line(name: str, data: bytes) -> str:
    """One RECORD row: path, sha256=<urlsafe base64, no padding>, size in bytes."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(out_dir: Path) -> Path:
    """Write roofline-<version>-py3-none-any.whl into `out_dir`; return its path."""
    root = source_root()
    metadata = metadata_text(root)
    name, version = _field(metadata, "Name"), _field(metadata, "Version")
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    contents = [(p.relative_to(root).as_posix(), p.read_bytes()) for p in package_files(root)]
    contents += [
        (f"{info}/METADATA", metadata.encode()),
        (
            f"{info}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: roofline.exercises.grader.wheel\n"
            b"Root-Is-Purelib: true\nTag: py3-none-any\n",
        ),
        (f"{info}/entry_points.txt", b"[console_scripts]\nroofline = roofline.__main__:main\n"),
    ]
    if (root / "LICENSE.md").is_file():
        contents.append((f"{info}/LICENSE.md", (root / "LICENSE.md").read_bytes()))
    record = "\n".join([record_line(n, d) for n, d in contents] + [f"{info}/RECORD,,"]) + "\n"
    out = Path(out_dir) / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in contents + [(f"{info}/RECORD", record.encode())]:
            entry = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            entry.compress_type, entry.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
            archive.writestr(entry, data)
    return out
