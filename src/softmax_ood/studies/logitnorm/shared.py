"""What the LogitNorm study's registration (:mod:`.study`), its claims and tables all read, kept
here so that none of them imports another."""

from __future__ import annotations

__all__ = ["HEADLINE", "trained_on_main"]

#: the headline claims (results page and section: the table at the top; ids or fnmatch patterns)
HEADLINE = ("headline",)


def trained_on_main(spec: dict) -> set[str]:
    """The losses the study trains on its main architecture: ``main_losses`` (a spec without
    it, e.g. a hand-built one: baseline, method, penalty and GODIN). Claims, tables and the
    measurements read this one rule: a loss not trained has no row, no column, no score read."""
    if spec.get("main_losses"):
        return set(spec["main_losses"])
    return {spec["baseline"], spec["method"], spec["penalty"], spec["godin"]}
