"""Replication: the same claims judged again on a second, disjoint seed set
(:func:`claims_with_replication`), its verdicts compared with the primary ones up to their
numbers (:func:`verdict_class`) in the ``replicates`` column."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from .family import _is_headline
from .spec import NOT_REPLICATED


def verdict_class(text: str) -> str:
    """A verdict's words without its numbers and notes: what two seed sets must share to
    replicate. The text up to its first parenthesis, dash or semicolon ("holds", "does not
    hold", "too few seeds to tell", "not established", "cannot test: premise P1 does not
    hold", "sanity check passes"), with "(the opposite is significant)" kept: a significant
    opposite is not the same outcome as a powered null."""
    import re

    text = str(text)
    head = re.split(r" \(| — |;", text, maxsplit=1)[0].strip()
    if "opposite is significant" in text:
        head += " (the opposite is significant)"
    return head


def replication_column(
    primary: pd.DataFrame, fresh: pd.DataFrame | None, not_replicated: Sequence[str] = ()
) -> pd.DataFrame:
    """``primary`` with its ``replicates`` column set from ``fresh`` (the same claims judged on
    the fresh seeds): "yes" when a row's verdict there has the same words
    (:func:`verdict_class`), "no: <verdict on the fresh seeds>" otherwise;
    :data:`NOT_REPLICATED` for every row when ``fresh`` is None, for a row whose id matches one
    of the ``not_replicated`` patterns (its frames are not re-run on fresh seeds) and for a row
    the fresh table lacks. Nothing else changes."""
    out = primary.copy()
    if fresh is None:
        out["replicates"] = NOT_REPLICATED
        return out
    again = dict(zip(fresh["claim_id"], fresh["verdict"], strict=True))
    column = []
    for cid, verdict in zip(out["claim_id"], out["verdict"], strict=True):
        if _is_headline(cid, not_replicated) or cid not in again:
            column.append(NOT_REPLICATED)
        elif verdict_class(again[cid]) == verdict_class(verdict):
            column.append("yes")
        else:
            column.append(f"no: {again[cid]}")
    out["replicates"] = column
    return out


def restrict_to_seeds(frames: Mapping[str, pd.DataFrame], seeds: Sequence[int]) -> dict:
    """Each frame that carries a ``seed`` column restricted to ``seeds`` and its rows without a
    seed (e.g. a theory curve); the others as they are. A frame with a ``seed`` column but no
    row of those seeds is an error (one sentence)."""
    keep = {int(s) for s in seeds}
    out = {}
    for name, frame in frames.items():
        if "seed" in frame.columns:
            seeded = frame["seed"].notna()
            mine = seeded & frame["seed"].isin(keep)
            frame = frame[mine | ~seeded].reset_index(drop=True)
            if not mine.any():
                raise ValueError(
                    f"The {name} frame has no rows for the seeds {sorted(keep)} it is "
                    "replicated on."
                )
        out[name] = frame
    return out


@dataclass(frozen=True)
class Replication:
    """The fresh seed set a study's claims are judged on a second time: its own ``frames``
    (frame name -> frame, computed on the fresh seeds; a frame not listed is the primary one,
    and the rows matching ``not_replicated`` read :data:`NOT_REPLICATED`), the claim
    function's ``section`` for those seeds, and the ``seeds``."""

    frames: Mapping[str, pd.DataFrame]
    section: Mapping
    seeds: Sequence[int]
    not_replicated: Sequence[str] = ()


def claims_with_replication(
    claims_of: Callable[[Mapping, Mapping], pd.DataFrame],
    frames: Mapping[str, pd.DataFrame],
    section: Mapping,
    replication: Replication | None = None,
) -> pd.DataFrame:
    """The claims table ``claims_of(frames, section)`` with its ``replicates`` column: judged
    again on ``replication``'s fresh seeds (its frames restricted to them by
    :func:`restrict_to_seeds`, each seed set with its own family adjustment), merged by
    :func:`replication_column`. Without ``replication`` every row reads
    :data:`NOT_REPLICATED`."""
    primary = claims_of(frames, section)
    if replication is None:
        return replication_column(primary, None)
    fresh_frames = {
        **frames,
        **restrict_to_seeds(replication.frames, replication.seeds),
    }
    fresh = claims_of(fresh_frames, replication.section)
    return replication_column(primary, fresh, replication.not_replicated)
