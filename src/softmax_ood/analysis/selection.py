"""Selection kept apart from confirmation.

A setting chosen by looking at results (an ensemble size K, a temperature tau, the kept OOD sets,
an L2 strength alpha, dropped shift levels) must be chosen on data disjoint from the data that
then confirm the claim: a validation split, or *selection seeds* that no verdict reads.

* :func:`split_seeds` cuts a seed list into selection and confirmation seeds (the first
  ``n_select`` select; the rest confirm) and refuses an overlap or an empty side.
* :class:`Selection` records one choice: what was chosen, among which candidates, on which data,
  by which test. Its :meth:`~Selection.selection_text` is what a ``ClaimSpec(selection=...)``
  reads; :func:`select` makes the choice from the selection data only, so a claims table built
  from confirmation outputs cannot move it (the test in ``tests/test_analysis.py`` perturbs only
  confirmation outputs and checks that no selection changes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Selection", "annotate", "select", "seeds_text", "split_seeds"]


def seeds_text(seeds: Sequence[int]) -> str:
    """``[0, 1, 2, 3, 4]`` -> ``"seeds 0-4"``; ``[0, 2]`` -> ``"seeds 0, 2"``."""
    s = sorted(int(x) for x in seeds)
    if not s:
        return "no seeds"
    if len(s) > 2 and s == list(range(s[0], s[-1] + 1)):
        return f"seeds {s[0]}-{s[-1]}"
    return "seed " + str(s[0]) if len(s) == 1 else "seeds " + ", ".join(map(str, s))


def split_seeds(seeds: Sequence[int], n_select: int) -> tuple[list[int], list[int]]:
    """(selection seeds, confirmation seeds): the first ``n_select`` of the sorted seeds select,
    the others confirm. Both sides must be non-empty (one sentence otherwise)."""
    s = sorted(int(x) for x in seeds)
    if len(set(s)) != len(s):
        raise ValueError(f"seeds repeat in {s}")
    if not 0 < n_select < len(s):
        raise ValueError(
            f"cannot split {len(s)} seed(s) into {n_select} selection seed(s) and at least one "
            "confirmation seed"
        )
    return s[:n_select], s[n_select:]


@dataclass(frozen=True)
class Selection:
    """One setting chosen on selection data.

    :param setting: what was chosen (e.g. ``"ulmer.model.n_members"``).
    :param chosen: the chosen value.
    :param candidates: the values considered, in the order the rule scans them.
    :param on: the data that decided it (e.g. ``"selection seeds 100-102"``, ``"validation
        split"``).
    :param rule: the test or rule (e.g. ``"smallest K whose K-vs-2K TOST rejects at 0.05"``).
    """

    setting: str
    chosen: object
    candidates: tuple
    on: str
    rule: str

    def selection_text(self) -> str:
        """The ``ClaimSpec.selection`` text of a row whose settings this choice made."""
        return f"{self.setting} = {self.chosen} chosen on {self.on} ({self.rule})"


def select(
    setting: str,
    candidates: Sequence,
    passes: Callable[[object, Mapping], bool],
    selection_data: Mapping,
    *,
    on: str,
    rule: str,
    fallback=None,
) -> Selection:
    """The first candidate for which ``passes(candidate, selection_data)`` is true (scanned in
    order; ``fallback`` when none passes, or the last candidate if no fallback is given).
    ``selection_data`` is all the rule sees: pass the selection seeds' (or the validation
    split's) outputs only, never the confirmation outputs."""
    cands = tuple(candidates)
    if not cands:
        raise ValueError(f"{setting}: no candidate to select from")
    chosen = next((c for c in cands if passes(c, selection_data)), None)
    if chosen is None:
        chosen = cands[-1] if fallback is None else fallback
    return Selection(setting, chosen, cands, on, rule)


def annotate(specs: Sequence, selection: Mapping[str, str], confirmation: str) -> list:
    """``specs`` with their ``selection`` / ``confirmation`` texts filled where a spec leaves
    them empty: the selection text of the first pattern in ``selection`` (``fnmatch`` on the
    claim id, in order, ``"*"`` last as the study's default) and ``confirmation`` (what every
    verdict is computed on). The claims table then says, per row, what decided its settings and
    what confirmed it."""
    from dataclasses import replace
    from fnmatch import fnmatchcase

    out = []
    for s in specs:
        sel = s.selection or next(
            (text for pattern, text in selection.items() if fnmatchcase(s.id, pattern)), ""
        )
        out.append(replace(s, selection=sel, confirmation=s.confirmation or confirmation))
    return out
