"""Kubernetes resource quantities ("500m", "1.5Gi", "2k", "1e3"), parsed exactly.

The core keeps every quantity as an ``int`` count of milli-units (1 cpu == 1000,
1 byte of memory == 1000). Integers make quota arithmetic exact and cheap, and one
unit for all resources keeps the quota code free of per-resource special cases.

Why not ``kubernetes.utils.parse_quantity``: it is exact (Decimal) but lives in the
``kubernetes`` package, which ``scheduler.core`` must not import (see ``.importlinter``:
the core does no I/O and knows no Kubernetes client). The grammar is small and fixed
by apimachinery's ``resource.Quantity``, so a local parser is the lighter choice.
"""

from __future__ import annotations

import re
from fractions import Fraction

MILLI_PER_UNIT = 1000

_BINARY_SUFFIXES = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_DECIMAL_SUFFIXES = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}

# sign, digits with an optional fraction, then a binary/decimal suffix or an exponent.
_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>\d+(?:\.\d*)?|\.\d+)"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$"
)


class QuantityError(ValueError):
    """A string is not a Kubernetes quantity."""


def parse_quantity(value: str | int | float) -> int:
    """Parse a Kubernetes quantity into milli-units, rounding up like ``Quantity.MilliValue``."""
    if isinstance(value, bool):
        raise QuantityError(f"not a quantity: {value!r}")
    if isinstance(value, int):
        return value * MILLI_PER_UNIT
    if isinstance(value, float):
        # JSON numbers arrive as floats; repr() keeps the shortest exact decimal.
        value = repr(value)
    text = value.strip()
    match = _QUANTITY.match(text)
    if match is None:
        raise QuantityError(f"not a quantity: {value!r}")
    number = Fraction(match["number"])
    suffix = match["suffix"] or ""
    if suffix in _BINARY_SUFFIXES:
        scale: Fraction | int = _BINARY_SUFFIXES[suffix]
    elif suffix in _DECIMAL_SUFFIXES:
        scale = _DECIMAL_SUFFIXES[suffix]
    else:
        scale = Fraction(10) ** int(suffix[1:])
    milli = number * scale * MILLI_PER_UNIT
    if match["sign"] == "-":
        milli = -milli
    # Kubernetes rounds sub-milli precision up (ceil), never silently to zero.
    return -((-milli.numerator) // milli.denominator)


def format_quantity(milli: int) -> str:
    """Render milli-units as the shortest exact quantity string ("1500m", "2", "0")."""
    if milli % MILLI_PER_UNIT == 0:
        return str(milli // MILLI_PER_UNIT)
    return f"{milli}m"


_DECIMAL_STEPS = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))
_BINARY_STEPS = tuple(sorted(_BINARY_SUFFIXES.items(), key=lambda item: -item[1]))
_BINARY_RESOURCES = ("memory", "ephemeral-storage")


def kueue_quantity(resource: str, milli: int) -> str:
    """A quantity as Kueue prints it in messages (resources.ResourceQuantityString): cpu in milli-units,
    memory, ephemeral storage and hugepages in binary suffixes when exact, every other resource in
    decimal suffixes ("1500m", "20", "1Gi", "2k")."""
    if resource == "cpu":
        return format_quantity(milli)
    value = -(-milli // MILLI_PER_UNIT)
    if value and (resource in _BINARY_RESOURCES or resource.startswith("hugepages-")):
        for suffix, scale in _BINARY_STEPS:
            if value % scale == 0:
                return f"{value // scale}{suffix}"
        if abs(value) < 1024:
            return str(value)
    for suffix, scale in _DECIMAL_STEPS:
        if value and value % scale == 0:
            return f"{value // scale}{suffix}"
    return str(value)
