"""Record a homework set's next edition, and the `python -m roofline editions` command.

`roofline.exercises.editions` reads and compares editions (the homework imports it); this
module records them, drawing and answering a set's homework for many ids to find every chip
and model it reads, so it imports `homework`, which never imports it back.
"""

from __future__ import annotations

import json
import sys

from . import core, editions, homework

SWEEP_IDS = 400  # ids drawn when recording an edition: every chip a set can draw is hit


class _Recorder(dict):
    """An index that remembers which objects were looked up."""

    def __init__(self, items, seen: dict):
        super().__init__(items)
        self.seen = seen

    def __getitem__(self, key):
        value = super().__getitem__(key)
        self.seen[value.name] = value
        return value


def record(set_id: str, ids: int = SWEEP_IDS) -> dict:
    """{"chips": {name: figures}, "models": {...}}: what `set_id` reads, over `ids` ids' draws,
    shown numbers, answers and mistakes, from the live catalog."""
    from .. import catalog, models

    chips: dict = {}
    model_objects: dict = {}
    chip_token = catalog.FROZEN_CHIPS.set(_Recorder(catalog._index(), chips))
    model_token = models.FROZEN_MODELS.set(_Recorder(models._index(), model_objects))
    try:
        homework_set = homework.get_set(set_id)
        for i in range(ids):
            params = homework._derive(set_id, f"edition-sweep-{i}")
            homework_set.describe(params)
            for q in homework_set.questions:
                exercise = core.get_exercise(homework_set.exercise_id(q))
                exercise.answer(params)
                exercise.mistake_table(**params)
    finally:
        models.FROZEN_MODELS.reset(model_token)
        catalog.FROZEN_CHIPS.reset(chip_token)
    return {
        "chips": {n: editions.to_json(c) for n, c in sorted(chips.items())},
        "models": {n: editions.to_json(m) for n, m in sorted(model_objects.items())},
    }


def freeze(set_id: str, edition: str | None = None, make_current: bool = True) -> str:
    """Record the live catalog's figures for `set_id` as a new edition (default: the next
    number) and, by default, make it current. Returns the edition's name."""
    data = editions._file(set_id) or {"set": set_id, "current": None, "editions": {}}
    edition = edition or str(1 + max((int(e) for e in data["editions"] if e.isdigit()), default=0))
    if edition in data["editions"]:
        raise ValueError(
            f"homework {set_id} already has an edition {edition}: editions never change"
        )
    data["editions"][edition] = record(set_id)
    if make_current or data["current"] is None:
        data["current"] = edition
    editions.EDITIONS_DIR.mkdir(exist_ok=True)
    editions._path(set_id).write_text(
        json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    editions._file.cache_clear()
    editions._objects.cache_clear()
    return edition


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m roofline editions")
    parser.add_argument("action", choices=("freeze", "check"))
    parser.add_argument("sets", nargs="*", help="homework sets (default: all)")
    parser.add_argument("--edition", default=None, help="the new edition's name (freeze)")
    args = parser.parse_args(argv)
    for set_id in args.sets or homework.sets():
        if args.action == "freeze":
            print(f"{set_id}: recorded edition {freeze(set_id, args.edition)}")
        else:
            changed = editions.differences(set_id)
            print(
                f"{set_id} edition {editions.current(set_id)}: "
                + (f"the catalog now differs on {', '.join(changed)}" if changed else "as recorded")
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
