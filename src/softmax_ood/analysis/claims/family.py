"""Family control: a study's tested claims adjusted together (Benjamini–Hochberg over the
family, Holm over its headline rows), and the switch that turns the adjustment off for the
hand-built per-row controls (:func:`family_control`)."""

from __future__ import annotations

import contextvars
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np

_FAMILY = contextvars.ContextVar("family_control", default=True)


@contextmanager
def family_control(on: bool) -> Iterator[None]:
    """Within the block, :func:`evaluate_claims` adjusts each study's family of claims (``on``,
    the default everywhere) or judges every row on its raw p alone (``off``: the per-row rule,
    for the hand-built controls that show one row can hold and can fail; the adjustment only
    ever turns a "holds" into a not-holds, never the reverse)."""
    token = _FAMILY.set(bool(on))
    try:
        yield
    finally:
        _FAMILY.reset(token)


def bh_adjust(p: Sequence[float]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p's (step-up, false discovery rate) of ``p`` in its order:
    ``min over j ≥ i of m · p_(j) / j`` for the i-th smallest, capped at 1."""
    x = np.asarray(p, dtype=float)
    m = len(x)
    if m == 0:
        return x
    order = np.argsort(x, kind="stable")
    ranked = x[order] * m / np.arange(1, m + 1)
    ranked = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(ranked, 1.0)
    return out


def holm_adjust(p: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p's (family-wise error) of ``p`` in its order: ``max over
    j ≤ i of (m − j + 1) · p_(j)`` for the i-th smallest, capped at 1."""
    x = np.asarray(p, dtype=float)
    m = len(x)
    if m == 0:
        return x
    order = np.argsort(x, kind="stable")
    ranked = np.maximum.accumulate(x[order] * (m - np.arange(m)))
    out = np.empty(m)
    out[order] = np.minimum(ranked, 1.0)
    return out


def _is_headline(cid: str, patterns: Sequence[str]) -> bool:
    from fnmatch import fnmatchcase

    return any(fnmatchcase(cid, pat) for pat in patterns)


def _family(
    ids: Sequence[str], p: Mapping[str, float], headline: Sequence[str]
) -> dict[str, tuple[float, float, str]]:
    """Per tested claim id: (BH adjusted p over every tested claim, Holm adjusted p over the
    tested headline rows or NaN, how)."""
    if not ids:
        return {}
    bh = dict(zip(ids, bh_adjust([p[i] for i in ids]), strict=True))
    how = f"Benjamini–Hochberg over the {len(ids)} tested claims"
    heads = [i for i in ids if _is_headline(i, headline)]
    holm = dict(zip(heads, holm_adjust([p[i] for i in heads]), strict=True))
    return {
        i: (
            float(bh[i]),
            float(holm.get(i, math.nan)),
            f"{how}; Holm over the {len(heads)} tested headline claims" if i in holm else how,
        )
        for i in ids
    }
