"""What the LogitNorm study's registration (:mod:`.study`), its claims and tables all read, kept
here so that none of them imports another."""

from __future__ import annotations

__all__ = ["HEADLINE", "prob_columns", "trained_on_main"]

#: the headline claims (results page and section: the table at the top; ids or fnmatch patterns)
HEADLINE = ("headline",)


def trained_on_main(spec: dict) -> set[str]:
    """The losses the study trains on its main architecture: ``main_losses`` (a spec without
    it, e.g. a hand-built one: baseline, method, penalty and GODIN). Claims, tables and the
    measurements read this one rule: a loss not trained has no row, no column, no score read."""
    if spec.get("main_losses"):
        return set(spec["main_losses"])
    return {spec["baseline"], spec["method"], spec["penalty"], spec["godin"]}


def prob_columns(columns) -> list[str]:
    """The softmax columns ``p0`` ... ``p<k-1>`` among ``columns`` (of the ``softmax`` frame,
    :mod:`.outputs`), in class order: what the frame writes and Figs. 2 and 3 read."""
    cols = [c for c in columns if c[:1] == "p" and c[1:].isdigit()]
    return sorted(cols, key=lambda c: int(c[1:]))
