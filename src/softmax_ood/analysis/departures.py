"""Departures from a paper, declared as data (INTERFACES §2).

Every study lists, in ``studies/<name>/departures.py``, each place its setting departs from what
its paper states: the setting (a config key such as ``"recipes.kang-paper-sgd.milestones"``, or a
concept), the paper's value and the section that states it, our value, one sentence why, the
claim ids it touches, and the configs it applies to (``scale``: ``"default"``, ``"paper"`` or
``"all"``). The study's ``departures(config)`` hook returns them; :func:`departures_frame` is
the table the reports and the results page show beside the claims.

Each study's module also records ``PAPER_VALUES``: config keys whose YAML comment cites the paper
and whose value *is* the paper's (key -> the paper's value). ``tests/test_study_contract.py``
checks that every config value whose comment cites a paper section (``paper:``, ``Sec.``,
``App.``, ``§``, ``Table``) is either such a paper value (and equal to it) or a declared
departure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "COLUMNS",
    "SCALES",
    "Departure",
    "config_scale",
    "departures_frame",
    "for_config",
    "of_study",
]

SCALES = ("default", "paper", "all")
COLUMNS = ["setting", "paper", "section", "ours", "why", "claims", "scale", "kind"]


@dataclass(frozen=True)
class Departure:
    """One departure from the paper.

    :param setting: config key or concept, e.g. ``"recipes.paper-sgd.milestones"``.
    :param paper: the paper's value, e.g. ``"100/150 of 200 epochs"``.
    :param section: where the paper states it, e.g. ``"App. B.2"``.
    :param ours: our value.
    :param why: one sentence.
    :param claims: claim ids it touches.
    :param scale: ``"default"``, ``"paper"`` or ``"all"``: the configs it applies to.
    :param kind: optional class of the departure (e.g. Seddik's ``"error"`` for a printed
        formula that is wrong, ``"data"``, ``"setting"``); "" when not classified.
    """

    setting: str
    paper: str
    section: str
    ours: str
    why: str
    claims: tuple[str, ...] = ()
    scale: str = "all"
    kind: str = ""

    def __post_init__(self):
        object.__setattr__(self, "claims", tuple(self.claims))
        if self.scale not in SCALES:
            raise ValueError(
                f"departure {self.setting!r}: scale {self.scale!r} is not one of {list(SCALES)}"
            )
        empty = [f for f in ("setting", "paper", "section", "ours", "why") if not getattr(self, f)]
        if empty:
            raise ValueError(f"departure {self.setting!r}: empty field(s) {', '.join(empty)}")

    def applies_to(self, scale: str) -> bool:
        """True when the departure holds for a config of ``scale`` (``"default"``/``"paper"``)."""
        return self.scale == "all" or self.scale == scale


def departures_frame(deps: Iterable[Departure]):
    """The departures as a DataFrame (columns :data:`COLUMNS`; ``claims`` ", "-joined)."""
    import pandas as pd

    rows = [
        {
            "setting": d.setting,
            "paper": d.paper,
            "section": d.section,
            "ours": d.ours,
            "why": d.why,
            "claims": ", ".join(d.claims),
            "scale": d.scale,
            "kind": d.kind,
        }
        for d in deps
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def for_config(deps: Iterable[Departure], claim_ids: Iterable[str], scale: str) -> list[Departure]:
    """The departures that apply to a config of ``scale`` (``"default"`` or ``"paper"``), with
    claim patterns resolved against that config's claim ids: an entry with ``*`` stands for every
    id it matches (e.g. ``"score_rises:*"``, ``"C-*-ensemble"``); ids the config lacks are
    dropped."""
    from dataclasses import replace
    from fnmatch import fnmatchcase

    ids = list(claim_ids)
    out = []
    for d in deps:
        if not d.applies_to(scale):
            continue
        claims: list[str] = []
        for c in d.claims:
            hits = [i for i in ids if fnmatchcase(i, c)] if "*" in c else [c] * (c in ids)
            claims += [h for h in hits if h not in claims]
        out.append(replace(d, claims=tuple(claims)))
    return out


def config_scale(config: dict) -> str:
    """``"paper"`` for a paper-scale config (``data.source: paper``), else ``"default"``."""
    return "paper" if (config.get("data") or {}).get("source") == "paper" else "default"


def of_study(deps: Iterable[Departure], specs: Iterable, config: dict) -> list[Departure]:
    """A study's ``departures(config)``: ``deps`` for ``config``'s scale, claims resolved
    against its claim specs (:func:`for_config`)."""
    return for_config(deps, [s.id for s in specs], config_scale(config))
