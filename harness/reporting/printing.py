"""The verdict and the side-by-side table on a terminal (rich): the same pivot as report.html.

Nothing is ever cut: every column folds instead of ending in an ellipsis, and a table wider than the
terminal is printed as several tables of fewer design columns, each repeating the metric and unit.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.drivers import contract
from harness.reporting import pivoting, verdicts

BORDER_PER_COLUMN = 3
"""What rich's default box adds per column (a bar and one space of padding either side)."""
BEST = "*"


def cell_text(cell: pivoting.Cell | None, row: pivoting.Row) -> Text:
    if cell is None:
        return Text("–", style="dim")
    text = Text(row.shown(cell.value))
    if cell.has_interval:
        text.append(f" [{row.shown(cell.low)}, {row.shown(cell.high)}]", style="dim")
    if cell.best:
        text.append(f" {BEST}")
        text.stylize("bold green")
    elif cell.ratio is not None:
        text.append(f" {pivoting.ratio_text(cell.ratio)}", style="dim")
    return text


def _chunks(widths: Sequence[int], fixed: int, total: int) -> list[list[int]]:
    """Column indexes grouped so that each group fits `total` beside the `fixed` columns (at least one each)."""
    groups, current, used = [], [], fixed
    for index, width in enumerate(widths):
        need = width + BORDER_PER_COLUMN
        if current and used + need > total:
            groups.append(current)
            current, used = [], fixed
        current.append(index)
        used += need
    if current:
        groups.append(current)
    return groups


def _layout(pivot: pivoting.Pivot) -> tuple[list[list[Text]], int, int, list[int]]:
    """(cell texts per row, metric width, unit width, width of each design column)."""
    texts = [[cell_text(cell, row) for cell in row.cells] for row in pivot.rows]
    metric_width = max([len("metric")] + [len(row.metric) for row in pivot.rows])
    unit_width = max([len("unit")] + [len(row.unit) for row in pivot.rows])
    widths = [max([len(column.label)] + [len(line[i]) for line in texts]) for i, column in enumerate(pivot.columns)]
    return texts, metric_width, unit_width, widths


def full_width(pivot: pivoting.Pivot) -> int:
    """The width of the whole pivot as one table."""
    _, metric_width, unit_width, widths = _layout(pivot)
    return metric_width + unit_width + sum(widths) + BORDER_PER_COLUMN * (2 + len(widths)) + 1


def needed_width(pivot: pivoting.Pivot) -> int:
    """The narrowest console that shows the metric, the unit and the widest design column unfolded."""
    _, metric_width, unit_width, widths = _layout(pivot)
    return metric_width + unit_width + max(widths, default=0) + 3 * BORDER_PER_COLUMN + 1


def tables(pivot: pivoting.Pivot, width: int) -> list[Table]:
    """The pivot as one rich Table per group of design columns that fits `width` characters."""
    texts, metric_width, unit_width, widths = _layout(pivot)
    groups = _chunks(widths, metric_width + unit_width + 2 * BORDER_PER_COLUMN + 1, width)
    out = []
    for number, group in enumerate(groups, 1):
        part = f" ({number}/{len(groups)})" if len(groups) > 1 else ""
        table = Table(title=Text(f"side by side{part} (columns: {pivot.heading}; {BEST} best in row, ×r = value / best)"),
                      title_justify="left")
        table.add_column("metric", no_wrap=True, min_width=metric_width, overflow="fold")
        table.add_column("unit", no_wrap=True, min_width=unit_width, overflow="fold")
        for index in group:
            table.add_column(Text(pivot.columns[index].label), justify="right", no_wrap=True, min_width=widths[index],
                             overflow="fold")
        for row, line in zip(pivot.rows, texts):
            # Text, not str: a metric such as `write_qps[churn]` is not rich markup
            table.add_row(Text(row.metric), Text(row.unit), *(line[index] for index in group))
        out.append(table)
    return out


def show(console: Console, pivot: pivoting.Pivot, asked: Sequence[contract.Question]) -> None:
    """Print the verdict lines (answering `asked`: verdicts.questions of the drivers) and the pivot, never
    truncating a name."""
    answers, unanswered = verdicts.answer(pivot, asked)
    if answers:
        console.print("verdict", style="bold")
        for item in answers:
            console.print(f"  {verdicts.sentence(item)}", highlight=False, markup=False, soft_wrap=True)
        for note in verdicts.caveats(answers):
            console.print(f"  note: {note}", highlight=False, markup=False, soft_wrap=True)
    if unanswered:
        console.print(f"  not measured: {', '.join(q.title for q in unanswered)}", style="dim", highlight=False)
    if not pivot.rows:
        console.print("no summary metrics in this run", style="dim")
        return
    # a terminal narrower than one design column: print at the width needed (the terminal wraps the
    # lines) rather than fold a name; a log (no terminal) gets the whole table in one piece
    width = max(console.width, needed_width(pivot)) if console.is_terminal else full_width(pivot)
    wide = console if width <= console.width else Console(
        file=console.file, width=width, force_terminal=console.is_terminal, color_system=console.color_system,
        no_color=console.no_color)  # a console never prints wider than its own width
    for table in tables(pivot, width):
        wide.print(table)
    if pivot.unmeasured:
        console.print(f"  no metrics from: {', '.join(pivot.unmeasured)}", highlight=False, markup=False, soft_wrap=True)
    for entry in pivot.extra:
        note = f" ({entry.note})" if entry.note else ""
        console.print(f"  within-run ratio: {entry.metric} @ {entry.point} = {pivoting.number(entry.value)}{note}",
                      highlight=False, markup=False, soft_wrap=True)
