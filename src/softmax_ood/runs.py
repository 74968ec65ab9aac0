"""Run identity and where a run's files live.

A *run* is one trained model: (dataset, recipe, architecture variant, loss variant, seed). The
names are config keys (``recipes:``, ``architectures:``, ``losses:``); studies declare the runs
they need and the workflow trains the union of them once each. Files of a run live under
``results/<kind>/<dataset>/<recipe>/<arch>/<loss>/seed<k>/``.

No torch import: the Snakefile uses this module at parse time.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

__all__ = ["Run", "parse_run_dir", "run_dir", "union_runs"]


class Run(NamedTuple):
    dataset: str
    recipe: str
    arch: str
    loss: str
    seed: int

    @property
    def name(self) -> str:
        return f"{self.dataset}/{self.recipe}/{self.arch}/{self.loss}/seed{self.seed}"


def run_dir(kind: str, run: Run) -> str:
    """``results/<kind>/<dataset>/<recipe>/<arch>/<loss>/seed<k>``."""
    return f"results/{kind}/{run.name}"


def parse_run_dir(path: str | Path) -> Run:
    """The run of a file ``.../<dataset>/<recipe>/<arch>/<loss>/seed<k>/<file>``."""
    parts = Path(path).parent.parts
    if len(parts) < 5 or not parts[-1].startswith("seed"):
        raise ValueError(
            f"{path} is not inside a run folder .../<dataset>/<recipe>/<arch>/<loss>/seed<k>/"
        )
    dataset, recipe, arch, loss, seed = parts[-5:]
    return Run(dataset, recipe, arch, loss, int(seed.removeprefix("seed")))


def union_runs(groups: Iterable[Iterable[Run]]) -> list[Run]:
    """Every run any group needs, once, sorted (a model two studies need is trained once)."""
    return sorted({Run(*r) for group in groups for r in group})
