"""The claims table as markdown (:func:`render_claims_markdown`)."""

from __future__ import annotations

import math

import pandas as pd

from .spec import NOT_REPLICATED


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _num(x, fmt: str) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _needed(r) -> str:
    if r.get("test") == "equivalence":
        return f"within ± {r['threshold']:g}"
    return f"{r['direction']} {r['threshold']:g}"


def _observed(r) -> str:
    obs = r.get("observed")
    if not isinstance(obs, str) or not obs:
        return "n/a"
    return f"{obs} (p opp. {_num(r.get('p_opposite', math.nan), '.2g')})"


def _detail(r) -> str:
    extra = [
        f"{label}: {r[key]}"
        for key, label in (("selection", "settings chosen on"), ("confirmation", "confirmed on"))
        if isinstance(r.get(key), str) and r.get(key)
    ]
    return "; ".join([str(r["detail"]), *extra]) if extra else str(r["detail"])


def _replicates(r) -> str:
    v = r.get("replicates")
    return v if isinstance(v, str) and v else NOT_REPLICATED


def render_claims_markdown(df: pd.DataFrame, title: str = "Claims") -> str:
    """The claims table as markdown: premises, then claims, then sanity rows, each with its value,
    what it needs (a side of the threshold, or "within ± bar" for an equivalence), one-sided p,
    the family-adjusted p the verdict uses, n, power and the effect it is computed at (to detect the paper's effect), the observed direction with the opposite's p,
    the verdict and whether it replicates on fresh seeds; the detail names the selection and confirmation data where given."""
    lines = [
        f"### {title}",
        "",
        "| kind | id | claim | statistic | value | needed | p | p adj. | n | power | effect used "
        "| observed | verdict | replicates | detail |",
        "|---|---|---|---|---:|---|---:|---:|---:|---:|---|---|---|---|---|",
    ]
    for _, r in df.iterrows():
        lines.append(
            f"| {r['kind']} | {_cell(r['claim_id'])} | {_cell(r['claim'])} | "
            f"{_cell(r['statistic'])} | {_num(r['value'], '.3g')} | "
            f"{_needed(r)} | {_num(r['p_value'], '.3g')} | "
            f"{_num(r.get('p_adjusted', math.nan), '.3g')} | {r['n']} | "
            f"{_num(r['power'], '.2f')} | {_cell(r.get('effect_note') or 'n/a')} | "
            f"{_observed(r)} | **{r['verdict']}** | "
            f"{_cell(_replicates(r))} | {_cell(_detail(r))} |"
        )
    return "\n".join(lines) + "\n"
