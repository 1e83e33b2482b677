"""One colour per design for every figure of a report (pure): a strategy always gets its own colour,
other columns (implementations, feature-gate arms, runs) the next free one in column order."""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.publishing import strategies

STRATEGY_COLOURS = {
    strategies.STATUS_FIELD: "#d62728",
    strategies.SINGLE_OBJECT: "#ff7f0e",
    strategies.CQ_STATUS_TOPN: "#9467bd",
    strategies.AGGREGATED_SNAPSHOT: "#1f77b4",
    strategies.AGGREGATED_INDEXED: "#2ca02c",
}
SPARE = ("#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39",
         "#7b4173")
COMPONENT_COLOURS = {"kube-apiserver": "#1f77b4", "etcd": "#ff7f0e", "scheduler": "#2ca02c",
                     "kube-controller-manager": "#9467bd", "kwok-controller": "#7f7f7f", "kueue": "#8c564b",
                     "kube-scheduler": "#17becf"}


def colours(columns: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Colour per column label from (label, strategy) pairs: the first column of a strategy takes the
    strategy's colour; the rest take spare colours in order."""
    out, taken, spare = {}, set(), iter(SPARE * (1 + len(columns) // len(SPARE)))
    for label, strategy in columns:
        colour = STRATEGY_COLOURS.get(strategy)
        if colour is None or colour in taken:
            colour = next(spare)
        taken.add(colour)
        out[label] = colour
    return out


def component_colour(component: str, index: int) -> str:
    return COMPONENT_COLOURS.get(component, SPARE[index % len(SPARE)])
