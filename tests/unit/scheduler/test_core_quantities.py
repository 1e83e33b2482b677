import pytest

from scheduler.core.quantities import QuantityError, format_quantity, parse_quantity


@pytest.mark.parametrize(
    ("text", "milli"),
    [
        ("1", 1000),
        ("500m", 500),
        ("1.5", 1500),
        ("0.1", 100),
        ("2k", 2_000_000),
        ("1Ki", 1024 * 1000),
        ("1.5Gi", 3 * 2**29 * 1000),
        ("1e3", 1_000_000),
        ("1E-3", 1),
        ("100M", 100 * 10**6 * 1000),
        ("1n", 1),  # rounds up, never to zero
        ("-500m", -500),
        ("+2", 2000),
        (".5", 500),
        (7, 7000),
        (0.25, 250),
    ],
)
def test_parses_exactly(text, milli):
    assert parse_quantity(text) == milli


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "5 Gi", "1Kb", "--1", True])
def test_rejects_non_quantities(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize(("milli", "text"), [(1000, "1"), (1500, "1500m"), (0, "0"), (2**30 * 1000, "1073741824")])
def test_formats_shortest_exact(milli, text):
    assert format_quantity(milli) == text
    assert parse_quantity(text) == milli
