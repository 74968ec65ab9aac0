"""The LogitNorm page's measured numbers, generated from the claims table and the floor frame.

The rule ``logitnorm_readme_block`` writes :func:`readme_block` to
``results/logitnorm/<ds>/readme_block.md``; the study's documentation page :data:`DOC_PAGE`
(linked from the README) holds the same text between :data:`BEGIN` and :data:`END`, and a test
checks the two agree (the release step). No measured number is typed into the docs.
"""

from __future__ import annotations

import math

import pandas as pd

from .floor import set_status

__all__ = ["BEGIN", "DOC_PAGE", "END", "readme_block"]

DOC_PAGE = "docs/studies/logitnorm.md"  # relative to the checkout: the page holding the block

BEGIN = "<!-- logitnorm:measured (generated: results/logitnorm/fashion/readme_block.md) -->"
END = "<!-- /logitnorm:measured -->"


def _f(x, fmt=".2f") -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def readme_block(claims: pd.DataFrame, floor: pd.DataFrame) -> str:
    """Markdown: per OOD set (grouped: near, matched, cue-separable) the floor battery's best
    detector beside CE's MSP on the selection images (which alone decide whether a far set is
    kept; :func:`.floor.set_status`) -- the tuning and the held-out family apart -- and the same
    test on the confirmation images (the premise row); then the premise and claim rows with
    value, p, n, power and verdict."""
    lines = [
        "| OOD set | group | selection images: battery tuning FPR95 (%, detector) | held-out "
        "FPR95 (%, detector) | CE MSP FPR95 (%) | floor - CE (pp), p | confirmation images: "
        "battery FPR95 (%, detector) | CE MSP FPR95 (%) | floor - CE (pp), p | in the headline |",
        "|---|---|---|---|---:|---|---|---:|---|---|",
    ]
    order = {"near": 0, "matched": 1, "cue-separable": 2}
    rows = floor.assign(_g=floor.get("group", floor["shift"]).map(order).fillna(3))
    for _, r in rows.sort_values(["_g", "ood_set"]).iterrows():
        lines.append(
            f"| {r['ood_set']} | {r.get('group', r['shift'])} | "
            f"{_f(r.get('selection_tuning_fpr95'), '.1f')} "
            f"({r.get('selection_tuning_detector', '')}) | "
            f"{_f(r.get('selection_heldout_fpr95'), '.1f')} "
            f"({r.get('selection_heldout_detector', '')}) | "
            f"{_f(r.get('selection_ce_fpr95'), '.1f')} | "
            f"{_f(r.get('selection_value'), '.1f')}, p = {_f(r.get('selection_p_value'), '.3g')} "
            f"| {_f(r['floor_fpr95'], '.1f')} ({r['floor_detector']}) | "
            f"{_f(r['ce_fpr95'], '.1f')} | {_f(r['value'], '.1f')}, "
            f"p = {_f(r['p_value'], '.3g')} | "
            f"{set_status(r) if r['shift'] != 'near' else 'near (apart)'} |"
        )
    lines += control_table(floor)
    regime = regime_sentence(claims)
    lines += [
        *(["", regime] if regime else []),
        "",
        "| kind | id | value | needed | p | n | power | verdict |",
        "|---|---|---:|---|---:|---:|---:|---|",
    ]
    for _, r in claims.iterrows():
        if str(r["claim_id"]).startswith("P-floor-"):
            continue  # in the table above
        lines.append(
            f"| {r['kind']} | {r['claim_id']} | {_f(r['value'], '.3g')} | "
            f"{r['direction']} {r['threshold']:g} | {_f(r['p_value'], '.3g')} | {r['n']} | "
            f"{_f(r['power'])} | {r['verdict']} |"
        )
    return "\n".join(lines) + "\n"


def control_table(floor: pd.DataFrame) -> list[str]:
    """Markdown lines (empty without control rows): per far set with a cue-removal variant
    (:data:`softmax_ood.fashion.CUE_CONTROL`), CE's and LogitNorm's MSP FPR95 on the set and
    on the variant -- a sanity row (no verdict reads it) showing whether the networks' result
    rides on the cue; the kept sets are the ones it is for."""
    if "control_set" not in floor.columns:
        return []
    rows = floor[floor["control_set"].fillna("").astype(str) != ""].sort_values("ood_set")
    if rows.empty:
        return []
    lines = [
        "",
        "Cue-removal control (every image, mean over seeds; a sanity row, no verdict):",
        "",
        "| OOD set | cue removed | variant | CE MSP FPR95 (%): set -> variant | LogitNorm MSP "
        "FPR95 (%): set -> variant | set in the headline |",
        "|---|---|---|---|---|---|",
    ]
    for _, r in rows.iterrows():
        lines.append(
            f"| {r['ood_set']} | {r['control_cue']} | {r['control_set']} | "
            f"{_f(r['ce_set_fpr95'], '.1f')} -> "
            f"{_f(r['ce_control_fpr95'], '.1f')} | {_f(r['ln_fpr95'], '.1f')} -> "
            f"{_f(r['ln_control_fpr95'], '.1f')} | {set_status(r)} |"
        )
    return lines


def regime_sentence(claims: pd.DataFrame) -> str:
    """Why the paper's regime is not reached, from the rows (nothing typed): every premise
    that does not hold, outside the per-set floor rows, with its statistic's detail, and every
    claim whose statistic is undefined (e.g. C8: CE never reached the training accuracy its
    slope starts at). Empty when every premise holds and no statistic is undefined."""
    parts = []
    for _, r in claims.iterrows():
        cid = str(r["claim_id"])
        if cid.startswith("P-floor-"):
            continue
        failed = r["kind"] == "premise" and not str(r["verdict"]).startswith("holds")
        undefined = str(r["verdict"]).startswith("cannot test: the statistic is undefined")
        if failed or undefined:
            what = "undefined" if undefined else f"{r['verdict']} ({_f(r['value'], '.3g')})"
            parts.append(f"{cid} {what}: {r['detail']}")
    if not parts:
        return ""
    return "Where the paper's regime is not reached here: " + "; ".join(parts) + "."
