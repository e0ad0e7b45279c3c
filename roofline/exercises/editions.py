"""Homework editions: the figures each set's numbers were drawn from, frozen, so that a catalog
fix changes no student's numbers unless the class moves to a new edition on purpose.

Worked problems that people have solved must not change under them. A set's draw and answers
read chips (`get_chip`) and models (`get_model`); an edition records every chip and model a
set reads (found by drawing and answering for many ids) with all their figures, in
`roofline/exercises/editions/<set>.json`. While `frozen(set_id)` is in force (every
`homework.parameters`, `given`, `check` and the grader's expected values), `get_chip` and
`get_model` return those recorded objects; a name the edition did not record comes from the
catalog. What is NOT frozen: the formulas (`roofline.costs`, `estimate`), the checker's rules
and the homework modules' own constants (their lists of chips and sizes): a change there is a
new edition by hand.

    python -m roofline editions freeze part1   # record part1's next edition, make it current
    python -m roofline editions check          # where does the catalog now differ from them?

A set without an editions file reads the live catalog (edition "live"). This module reads and
compares editions and imports no homework; recording one (which draws a set's homework) is
`roofline.exercises.edition_maker`, which the command above runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import types
import typing
from pathlib import Path

EDITIONS_DIR = Path(__file__).with_name("editions")
LIVE = "live"


def _path(set_id: str) -> Path:
    return EDITIONS_DIR / f"{set_id}.json"


@functools.cache
def _file(set_id: str) -> dict | None:
    try:
        return json.loads(_path(set_id).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def current(set_id: str) -> str:
    """The edition a set's numbers come from: the file's `current` edition, or "live"."""
    data = _file(str(set_id))
    return LIVE if data is None else str(data["current"])


# ---------------------------------------------------------------- objects <-> JSON
def to_json(obj):
    """A chip or model (nested frozen dataclasses, tuples) as plain JSON data."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_json(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init}
    if isinstance(obj, (tuple, list)):
        return [to_json(v) for v in obj]
    return obj


def from_json(kind, data):
    """`to_json`'s inverse for the type hint `kind` (a dataclass, X | None, tuple[X, ...])."""
    if data is None:
        return None
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(kind) if a is not type(None)]
        return from_json(options[0], data) if len(options) == 1 else data
    if origin is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_json(args[0], v) for v in data)
        return tuple(from_json(a, v) for a, v in zip(args, data))
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        names = {f.name for f in dataclasses.fields(kind) if f.init}
        return kind(**{k: from_json(hints[k], v) for k, v in data.items() if k in names})
    return data


# ---------------------------------------------------------------- freezing
def _overlay(live: dict, frozen: dict, key) -> dict:
    """The live index with each recorded object in place of the catalog's (by name), plus the
    recorded ones the catalog no longer has."""
    index = {k: frozen.get(v.name, v) for k, v in live.items()}
    for name, obj in frozen.items():
        index.setdefault(key(name), obj)
    return index


@functools.cache
def _objects(set_id: str, edition: str) -> tuple[dict, dict]:
    """({name: Chip}, {name: ModelConfig}) recorded for the edition; KeyError if unknown."""
    from ..hardware import Chip
    from ..models import ModelConfig

    data = _file(set_id)
    if data is None or edition not in data["editions"]:
        known = sorted((data or {}).get("editions", {}))
        raise KeyError(
            f"homework {set_id} has no edition {edition!r}; it has {', '.join(known) or 'none'}"
        )
    recorded = data["editions"][edition]
    chips = {n: from_json(Chip, c) for n, c in recorded.get("chips", {}).items()}
    models = {n: from_json(ModelConfig, m) for n, m in recorded.get("models", {}).items()}
    return chips, models


@contextlib.contextmanager
def frozen(set_id, edition: str | None = None):
    """Within: `get_chip` and `get_model` return the figures `set_id`'s edition recorded
    (default: its current edition; "live" or no editions file: the catalog, unchanged)."""
    from .. import catalog, models

    edition = current(str(set_id)) if edition is None else edition
    if edition == LIVE or _file(str(set_id)) is None:
        yield edition
        return
    chips, model_objects = _objects(str(set_id), edition)
    chip_token = catalog.FROZEN_CHIPS.set(_overlay(catalog._index(), chips, catalog._key))
    model_index = _overlay(models._index(), model_objects, models._key)
    model_token = models.FROZEN_MODELS.set(model_index)
    try:
        yield edition
    finally:
        models.FROZEN_MODELS.reset(model_token)
        catalog.FROZEN_CHIPS.reset(chip_token)


def differences(set_id: str, edition: str | None = None) -> list[str]:
    """The recorded objects whose figures the live catalog now gives differently (a catalog
    fix the edition keeps away from students), by name."""
    from .. import catalog, models

    edition = current(set_id) if edition is None else edition
    if edition == LIVE:
        return []
    chips, model_objects = _objects(set_id, edition)
    changed = []
    for name, chip in chips.items():
        live = catalog._index().get(catalog._key(name))
        if live is None or _figures(live) != _figures(chip):
            changed.append(name)
    for name, model in model_objects.items():
        live_model = models._index().get(models._key(name))
        if live_model is None or _figures(live_model) != _figures(model):
            changed.append(name)
    return changed


#: What names, offers or cites an entry: a new alias, explorer choice, source quote (`source`,
#: `memory_source`, a link's `vendor` quote, ...) or note changes no figure a set reads (an
#: edition's objects are found by the live index's names).
_NOT_FIGURES = frozenset({"aliases", "explorers", "source", "notes", "vendor"})


def _figures(obj) -> dict:
    """`to_json` without the keys of `_NOT_FIGURES`, at every depth (a link's or a network's
    source too)."""
    return _strip(to_json(obj))


def _strip(value):
    if isinstance(value, dict):
        return {
            k: _strip(v)
            for k, v in value.items()
            if k not in _NOT_FIGURES and not k.endswith("_source")
        }
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
