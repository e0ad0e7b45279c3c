"""Reading what a student typed, before any verdict: a number with or without its unit, a
count typed with its noun ("116 sequences"), a decimal comma, a choice in the student's words,
answers in parts. What cannot be read raises `_Unreadable`, whose message the student sees.

Part of the checker (`roofline.exercises.core` names every module and re-exports them).
"""

from __future__ import annotations

import numbers
import re
import sys

from ..units import parse_quantity_details

#: Words a student may type for a regime, mapped to the choice they mean.
CHOICE_SYNONYMS = {
    "memory": "bandwidth",
    "bandwidth": "bandwidth",
    "mem": "bandwidth",
    "hbm": "bandwidth",
    "memory bandwidth": "bandwidth",
    "io": "bandwidth",
    "math": "compute",
    "compute": "compute",
    "flops": "compute",
    "arithmetic": "compute",
    "not possible": "impossible",
    "link": "link",
    "ici": "link",
    "nvlink": "link",
    "interconnect": "link",
    "network": "link",
    "communication": "link",
    "comms": "link",
}


#: Words dropped from a typed choice ("It is compute-bound." -> "compute").
CHOICE_FILLER = (
    "bound",
    "limited",
    "the",
    "it",
    "is",
    "its",
    "s",
    "a",
    "an",
    "this",
    "that",
    "by",
    "on",
    "operation",
    "matmul",
    "layer",
    "answer",
    "i",
    "think",
    "would",
    "be",
    "will",
    "so",
)


class _Unreadable(Exception):
    pass


def _safe_str(value, limit=80) -> str:
    """str(value) that never raises (a student's object may have a broken __str__)."""
    try:
        text = str(value)
    except Exception:
        text = f"<a {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _sentence(text: str) -> str:
    """A parser's message as a sentence: capital first letter, full stop."""
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def _unanswered(answer) -> bool:
    return answer is None or answer is Ellipsis


def _plain(value) -> dict:
    return {
        "value": value,
        "kind": None,
        "number": value,
        "factor": 1.0,
        "binary": False,
        "text": False,
    }


#: A count or a rate of counted things typed with its noun: "116 sequences", "47 chips",
#: "27065 tokens/s", "3 tokens per second" (group 1 the noun; mirrored in the page's script).
COUNT_NOUN = re.compile(r"\s+([A-Za-z][A-Za-z-]{2,})(\s*(?:/|\s+per\s+)\s*[A-Za-z]+)?\.?$")


def count_details(text: str) -> dict | None:
    """The details of a plain number typed with a noun ("116 sequences"), or None: for a
    question that asks for a plain number, the noun says what is counted, not a unit."""
    found = COUNT_NOUN.search(text)
    if found is None or found.start() == 0 or re.search(r"b(ps|/|$)", found.group(0)):
        return None  # "5 Gbps" is bits per second, a unit slip, not a count
    try:
        details = parse_quantity_details(text[: found.start()])
    except (ValueError, TypeError):
        return None
    if details["kind"] is not None or details["factor"] != 1.0:
        return None
    return dict(details, text=True, raw=text, noun=found.group(1))


def _as_details(answer, nouns: bool = False) -> dict:
    """parse_quantity_details for text; a plain number for numbers; raises _Unreadable.
    With `nouns`, a number typed with a noun ("47 chips") is read as the number."""
    np = sys.modules.get("numpy")
    sympy = sys.modules.get("sympy")
    if answer is None:
        raise _Unreadable("No answer yet: replace None with your number.")
    if answer is Ellipsis:
        raise _Unreadable("No answer yet: replace ... with your number.")
    if isinstance(answer, (bool,)) or (np is not None and isinstance(answer, np.bool_)):
        raise _Unreadable("That is True/False; this question wants a number.")
    if np is not None and isinstance(answer, np.ndarray):
        if answer.size != 1:
            raise _Unreadable(f"That is an array of {answer.size} values; give one number.")
        answer = answer.reshape(()).item()
    if np is not None and isinstance(answer, np.generic):
        answer = answer.item()
    if isinstance(answer, (bytes, bytearray)):
        raise _Unreadable(
            "That is bytes (b'...'); type the number itself, or text such as '1.01 ms'."
        )
    if sympy is not None and isinstance(answer, sympy.Basic):
        free: set = getattr(answer, "free_symbols", set())
        if free:
            raise _Unreadable(
                f"That expression still contains {', '.join(sorted(map(str, free)))}; "
                "substitute numbers to get a value."
            )
        try:
            answer = complex(answer.evalf())
        except (TypeError, ValueError, AttributeError):
            raise _Unreadable("That expression has no numeric value.") from None
    if isinstance(answer, complex):
        if answer.imag != 0:
            raise _Unreadable("That is a complex number; the answer is a real number.")
        answer = answer.real
    if isinstance(answer, (list, tuple, set, frozenset, dict)):
        raise _Unreadable(f"That is a {type(answer).__name__}; give one number.")
    if isinstance(answer, str):
        text = answer.strip()
        if not text:
            raise _Unreadable("The answer is empty; type a number.")
        if len(text) > 100:
            raise _Unreadable(
                "That text is too long to be a number; type a number such as "
                "240 or a quantity such as '1.01 ms'."
            )
        try:
            return dict(parse_quantity_details(text), text=True, raw=text)
        except (ValueError, TypeError) as error:
            counted = count_details(text) if nouns else None
            if counted is not None:
                return counted
            raise _Unreadable(_sentence(str(error))) from None
    if isinstance(answer, numbers.Number) or hasattr(type(answer), "__float__"):
        try:
            return _plain(float(answer))
        except OverflowError:
            raise _Unreadable("That number is too large to be any answer here.") from None
        except Exception:
            raise _Unreadable(
                f"Cannot read that {type(answer).__name__} as a number; type a "
                "number such as 240 or a quantity such as '1.01 ms'."
            ) from None
    raise _Unreadable(
        f"Cannot read a {type(answer).__name__} as a number; type a number "
        "such as 240 or a quantity such as '1.01 ms'."
    )


#: A number with one thousands comma ("1,011"): a reader of a decimal-comma locale may mean 1.011.
_ONE_COMMA = re.compile(r"(?<![\d.,])(\d{1,3}),(\d{3})(?![\d,])")


def comma_reading(details) -> tuple | None:
    """(as typed, as read, with a point, value with a point) for an answer with one thousands
    comma, e.g. ("1,011", "1011", "1.011", 1.011e-3) for '1,011 ms'; None otherwise.

    The book reads a comma as a thousands separator (1,000), so '1,011 ms' is 1011 ms; a wrong
    answer typed that way is told how it was read, and, where the decimal reading would be
    right, to write a point."""
    raw = details.get("raw") or ""
    found = _ONE_COMMA.findall(raw)
    if len(found) != 1 or raw.count(",") != 1 or found[0][1] == "000":
        return None
    head, tail = found[0]
    dotted = _ONE_COMMA.sub(r"\1.\2", raw)
    try:
        value = parse_quantity_details(dotted)["value"]
    except (ValueError, TypeError):
        return None
    return f"{head},{tail}", head + tail, f"{head}.{tail}", value


def normalise_choice(text: str, extra: dict | None = None) -> str:
    """'Compute-bound.' -> 'compute', 'memory bound' -> 'bandwidth', 'It is link-bound' ->
    'bandwidth' (mirrored in the answer box): lower case, punctuation dropped, filler words
    (CHOICE_FILLER) dropped, then CHOICE_SYNONYMS and the exercise's `choice_words`."""
    words = re.sub(r"[^a-z0-9]+", " ", text.lower()).split()
    text = " ".join(w for w in words if w not in CHOICE_FILLER)
    if extra and text in extra:
        return extra[text]
    return CHOICE_SYNONYMS.get(text, text)


def _split_parts(exercise, answer) -> list:
    n = len(exercise.parts)
    if isinstance(answer, str):
        pieces = [p.strip() for p in answer.split(";")]
    elif isinstance(answer, (tuple, list)):
        pieces = list(answer)
    else:
        raise _Unreadable(
            f"This question asks for {n} answers: give them as a tuple, "
            f"(first, second), or as text separated by ';'."
        )
    if len(pieces) != n:
        raise _Unreadable(
            f"This question asks for {n} answers, separated by ';' (you gave "
            f"{len(pieces)}): " + "; ".join(p.label() for p in exercise.parts) + "."
        )
    return pieces
