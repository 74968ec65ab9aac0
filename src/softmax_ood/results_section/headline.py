"""The headline: one row per study's headline claim (:func:`headline_frame`), the plain
sentence per study (:func:`headline_paragraph`), the verdict labels and intervals shown for a
claim, and the side-by-side view of ours beside the paper's printed values."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import pandas as pd

from ..analysis.claims import NOT_REPLICATED
from .outputs import DEPARTURE_COLUMNS, StudyOutputs, _fmt


# -- the headline: per paper, its headline claims in one table and one paragraph --------------
def _num(x) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return math.nan
    return x


#: a ``detail`` naming a test whose p is not a t-test's (the word "exact" alone is not one:
#: "exactly 0", "the exact-theory r" appear in t-tested rows' details)
_NOT_T = re.compile(r"binomial|permutation|\bexact (test|interval)|fisher")


def claim_interval(row: Mapping) -> tuple[float, float]:
    """The (1 - 2 alpha) interval of a claim row's statistic (the two-sided interval whose
    ends are the one-sided test's bounds at ``alpha``): the row's own ``ci_low``/``ci_high``
    when the engine or study gives them; else, for a rank correlation (``detail`` says
    Spearman), Fisher's z interval (variance 1.06/(n-3)); else, for a one-sample t-test on ``n``
    samples, the interval that test implies (``se = |value - threshold| / t_obs``, ``t_obs``
    from the row's one-sided p with n - 1 degrees of freedom; samples without spread give the
    point); none for a p of another test (``detail`` names an exact or binomial test). (nan, nan) where none can be stated (no test, one sample, a sanity row)."""
    from scipy import stats

    lo, hi = _num(row.get("ci_low")), _num(row.get("ci_high"))
    if math.isfinite(lo) and math.isfinite(hi):
        return lo, hi
    value, thr, p = _num(row.get("value")), _num(row.get("threshold")), _num(row.get("p_value"))
    n, alpha = int(_num(row.get("n")) or 0), _num(row.get("alpha"))
    if not (math.isfinite(value) and math.isfinite(p) and math.isfinite(alpha)) or n < 2:
        return math.nan, math.nan
    detail = str(row.get("detail") or "").lower()
    if "spearman" in detail:
        if n < 4 or abs(value) >= 1:
            return math.nan, math.nan
        half = stats.norm.isf(alpha) * math.sqrt(1.06 / (n - 3))
        z = math.atanh(value)
        return math.tanh(z - half), math.tanh(z + half)
    if not 0 < p < 1 or not math.isfinite(thr) or _NOT_T.search(detail):
        return math.nan, math.nan  # not a t-test's p (e.g. an exact binomial test's)
    if abs(p - 0.5**n) < 1e-12 * p:  # the engine's sign test: every sample equal
        return value, value
    t_obs = abs(float(stats.t.isf(p, n - 1)))
    if t_obs < 1e-9 or value == thr:
        return math.nan, math.nan
    half = stats.t.isf(alpha, n - 1) * abs(value - thr) / t_obs
    return value - half, value + half


def verdict_label(row: Mapping) -> str:
    """The verdict in a few words: "holds", "opposite significant", "not established",
    "too few seeds", "cannot test", "does not hold" (from the engine's verdict text and, where
    present, its ``observed``/``p_opposite`` columns)."""
    v = str(row.get("verdict") or "")
    alpha = _num(row.get("alpha"))
    p_opp = _num(row.get("p_opposite"))
    opposite = "opposite is significant" in v or (
        str(row.get("observed") or "") == "opposite"
        and math.isfinite(p_opp)
        and math.isfinite(alpha)
        and p_opp < alpha
    )
    if v.startswith("holds"):
        return "holds"
    if opposite:
        return "opposite significant"
    for key in ("not established", "too few seeds", "cannot test", "sanity check"):
        if v.startswith(key):
            return key
    return "does not hold" if v.startswith("does not hold") else (v.split("(")[0].strip() or "n/a")


def _short(x: float) -> str:
    """A number in at most four significant digits (``10``, ``33.33``, ``0.0042``)."""
    return "n/a" if not math.isfinite(x) else f"{x:.4g}"


def _paper_number(row: Mapping) -> str:
    """The paper's number and where the claim stands: ``"paper 68.4; claim > 0"``. The paper's
    number is the row's ``paper_value`` where finite (the spec's own, when its ``effect`` is a
    power target rather than the paper's), else ``threshold ± effect``. For an equivalence row
    the engine's ``effect`` is the paper's difference itself (not a distance from the bar) and
    the claim is that ours lies within ± the bar: ``"paper 0; claim within ± 2"``."""
    d, thr, eff = (
        str(row.get("direction") or ""),
        _num(row.get("threshold")),
        _num(row.get("effect")),
    )
    if str(row.get("effect_source") or "paper") != "paper":
        eff = math.nan  # a power target, not the paper's number
    if str(row.get("test") or "") == "equivalence" and math.isfinite(thr):
        needs = f"claim within ± {_short(thr)}"
        return (
            f"paper {_short(eff)}; {needs}"
            if math.isfinite(eff)
            else f"paper gives no number; {needs}"
        )
    needs = f"claim {d} {_short(thr)}" if d else ""
    given = _num(row.get("paper_value"))
    if math.isfinite(given):
        return f"paper {_short(given)}; {needs}" if needs else f"paper {_short(given)}"
    if math.isfinite(eff) and d:
        paper = thr + eff if d.startswith(">") else thr - eff
        return f"paper {_short(paper)}; {needs}"
    return f"paper gives no number; {needs}" if needs else "n/a"


def _versus(row: Mapping) -> str:
    """ "; ours smaller than the paper's 68.4 (two-sided p = 0.05)" where the row tests ours
    against the paper's number (``vs_paper``), else ""."""
    words = row.get("vs_paper")
    return f"; ours {words}" if isinstance(words, str) and words else ""


def _ours(row: Mapping) -> str:
    lo, hi = claim_interval(row)
    v = _short(_num(row.get("value")))
    alpha = _num(row.get("alpha"))
    level = f"{100 * (1 - 2 * alpha):g} %" if math.isfinite(alpha) else ""
    n = int(_num(row.get("n")) or 0)
    if math.isfinite(lo):
        return f"{v} [{_short(lo)}, {_short(hi)}] ({level} CI, n = {n})"
    return f"{v} (n = {n}; no interval)"


def _regime(s: StudyOutputs, claims: pd.DataFrame, cid: str) -> tuple[bool | None, str]:
    """Whether the premises claim ``cid`` rests on hold here, and which fail."""
    mine = claims[(claims["study"] == s.name) & (claims["kind"] == "premise")]
    needed = s.requires.get(cid)
    if needed is None or not needed:
        needed = list(mine["claim_id"])  # no declared premises: the paper's whole regime
    rows = mine[mine["claim_id"].isin(needed)]
    if rows.empty:
        return None, "no premise declared"
    failed = rows[~rows["holds"].astype(bool)]["claim_id"].tolist()
    if failed:
        return False, f"no: {', '.join(failed)} of {len(rows)} premises fail"
    return True, f"yes: all {len(rows)} premises hold"


def claims_grouped(claims: str, keep: int = 3) -> str:
    """A departure's ``", "``-joined claim ids as a reader takes them in: ids sharing the part
    before their first ``:`` are one entry ``"score_rises:* (12)"`` when there are more than
    ``keep`` of them (Kang's departures touch 100+ claims, one per loss x shift), else listed;
    first-seen order."""
    ids = [c.strip() for c in str(claims or "").split(",") if c.strip()]
    groups: dict[str, list[str]] = {}
    for c in ids:
        groups.setdefault(c.split(":", 1)[0] if ":" in c else c, []).append(c)
    out = []
    for prefix, members in groups.items():
        if len(members) > keep:
            out.append(f"{prefix}:* ({len(members)})")
        else:
            out += members
    return ", ".join(out)


def _departures_shown(s: StudyOutputs) -> pd.DataFrame:
    """The study's departures as shown (page and LaTeX): the claims each touches grouped
    (:func:`claims_grouped`)."""
    df = pd.DataFrame(s.departures, columns=DEPARTURE_COLUMNS)
    df["claims"] = [claims_grouped(c) for c in df["claims"]]
    return df


def _departures_touching(s: StudyOutputs, cid: str) -> list[dict]:
    return [
        d for d in s.departures if cid in [c.strip() for c in str(d.get("claims") or "").split(",")]
    ]


HEADLINE_COLUMNS = [
    "paper",
    "claim",
    "paper's number",
    "ours",
    "verdict",
    "regime met",
    "departures",
    "details",
]


#: the page's headline table: whether each verdict replicates on fresh seeds in its own column
#: (the LaTeX table, at the text width already, appends it to the verdict)
HEADLINE_HTML_COLUMNS = [*HEADLINE_COLUMNS[:5], "replicates", *HEADLINE_COLUMNS[5:]]


def _setting_names(ids: Sequence[str]) -> list[str]:
    """Setting ids without the claim's shared prefix (``ocs_trend:ce:contrast`` ->
    ``ce:contrast``) when they all have one."""
    heads = {c.split(":", 1)[0] for c in ids}
    if len(heads) == 1 and all(":" in c for c in ids):
        return [c.split(":", 1)[1] for c in ids]
    return list(ids)


def settings_sentence(ids: Sequence[str], labels: Sequence[str], regimes: Sequence) -> str:
    """A headline tested in many settings, in one sentence a reader can repeat: "holds in 21
    of the 27 settings where its regime is met (42 in all); the opposite is significant in 2:
    ce:contrast, ce:rotation" (``labels``: :func:`verdict_label` of each setting; ``regimes``:
    whether its premises hold, None where none is declared)."""
    names = dict(zip(ids, _setting_names(ids), strict=True))
    met = [c for c, ok in zip(ids, regimes, strict=True) if ok is True]
    held = [c for c, lab, ok in zip(ids, labels, regimes, strict=True) if ok and lab == "holds"]
    opposite = [
        names[c] for c, lab in zip(ids, labels, strict=True) if lab == "opposite significant"
    ]
    first = (
        f"holds in {len(held)} of the {len(met)} settings where its regime is met "
        f"({len(ids)} in all)"
        if met
        else f"its regime is met in none of the {len(ids)} settings"
    )
    rest = (
        f"the opposite is significant in {len(opposite)}: {', '.join(opposite)}"
        if opposite
        else "the opposite is significant in none"
    )
    return f"{first}; {rest}"


def _settings_row(s: StudyOutputs, claims: pd.DataFrame, mine: pd.DataFrame, ids) -> dict:
    """One headline row for a claim tested in many settings (one claim id each): the range of
    ours, the verdicts counted, the regime met in how many, a link to the paper's claims."""
    rows = [mine.loc[c].to_dict() for c in ids]
    labels = pd.Series([verdict_label(r) for r in rows]).value_counts()
    regimes = [_regime(s, claims, c)[0] for c in ids]
    values = [_num(r["value"]) for r in rows if math.isfinite(_num(r["value"]))]
    n_touch = sum(bool(_departures_touching(s, c)) for c in ids)
    return {
        "plain": settings_sentence(ids, [verdict_label(r) for r in rows], regimes),
        "study": s.name,
        "paper": s.title,
        "claim_id": ids[0],
        "claim": f"{ids[0]} ... ({len(ids)} settings): {rows[0]['claim']}",
        "paper's number": _paper_number(rows[0]),
        "ours": f"{len(values)} values from {_short(min(values))} to {_short(max(values))}"
        if values
        else "n/a",
        # one label only when every setting reads the same: the commonest of mixed verdicts
        # would read as the verdict ("holds: 15 cannot test, 21 holds, 2 opposite ...")
        "label": labels.index[0] if len(labels) == 1 else "mixed",
        "verdict": ", ".join(f"{n} {lab}" for lab, n in sorted(labels.items())),
        "replicates": _replicates_counted(rows),
        "regime_ok": all(regimes) if all(r is not None for r in regimes) else None,
        "regime met": f"in {sum(r is True for r in regimes)} of {len(ids)} settings",
        "departures": f"{len(s.departures)} ({n_touch} settings touched)",
        "details": f"#claims-{s.name}",
    }


def _plain_numbers(s: StudyOutputs, rows: pd.DataFrame) -> dict[str, str]:
    """The study's ``headline_plain(claims)`` of its claims rows ({} without the hook)."""
    if not s.headline_plain:
        return {}
    import importlib  # a "module:function" reference, resolved here: the core imports no study

    module, name = s.headline_plain.split(":")
    plain = getattr(importlib.import_module(module), name)
    return {str(k): str(v) for k, v in dict(plain(rows)).items()}


def _replicates(row: Mapping) -> str:
    """A claim row's ``replicates`` cell (:data:`NOT_REPLICATED` when its table has none)."""
    v = row.get("replicates")
    return v if isinstance(v, str) and v else NOT_REPLICATED


def _replicates_counted(rows: Sequence[Mapping]) -> str:
    """The ``replicates`` cell of a claim tested in many settings: how many replicate."""
    cells = [_replicates(r) for r in rows]
    if all(c == NOT_REPLICATED for c in cells):
        return NOT_REPLICATED
    tested = [c for c in cells if c != NOT_REPLICATED]
    return f"{sum(c == 'yes' for c in tested)} of {len(tested)} settings replicate"


def headline_frame(
    studies: Sequence[StudyOutputs], claims: pd.DataFrame, max_rows: int = 4
) -> pd.DataFrame:
    """One row per headline claim of every paper (study order, then the study's ``HEADLINE``
    order): the paper, the claim, the paper's number and where the claim stands, ours with its
    interval, the verdict (short label and the engine's words), whether its regime premises
    hold, the departures declared (all of the paper's, and those touching this claim) and the
    anchor of its row in the paper's claims table. A paper without headline claims gets one row
    saying so; one claim tested in more than ``max_rows`` settings (Kang: one per loss x shift)
    is one row counting the verdicts."""
    rows = []
    for s in studies:
        mine = claims[claims["study"] == s.name].set_index("claim_id", drop=False)
        ids = [h for h in s.headline if h in mine.index]
        if not ids:
            rows.append(
                {
                    "study": s.name,
                    "paper": s.title,
                    "claim_id": "",
                    "claim": "no headline claim declared",
                    "paper's number": "",
                    "ours": "",
                    "label": "n/a",
                    "verdict": "",
                    "replicates": "",
                    "regime_ok": None,
                    "regime met": "",
                    "departures": str(len(s.departures)),
                    "details": f"#{s.name}",
                }
            )
            continue
        if len(ids) > max_rows:
            rows.append(_settings_row(s, claims, mine, ids))
            continue
        plain = _plain_numbers(s, mine.reset_index(drop=True))
        for cid in ids:
            r = mine.loc[cid].to_dict()
            ok, regime = _regime(s, claims, cid)
            touching = _departures_touching(s, cid)
            rows.append(
                {
                    "plain": str(plain.get(cid) or ""),
                    "study": s.name,
                    "paper": s.title,
                    "claim_id": cid,
                    "claim": f"{cid}: {r['claim']}",
                    "paper's number": _paper_number(r) + _versus(r),
                    "ours": _ours(r),
                    "label": verdict_label(r),
                    "verdict": str(r["verdict"]),
                    "replicates": _replicates(r),
                    "regime_ok": ok,
                    "regime met": regime,
                    "departures": f"{len(s.departures)} ({len(touching)} on this claim)",
                    "details": f"#claim-{s.name}-{cid}",
                }
            )
    return pd.DataFrame(rows)


def _short_title(title: str) -> str:
    """A paper's title up to its first comma or colon: ``"Wei et al. 2022"``,
    ``"Cross-paper"``."""
    return re.split(r"[,:]", title, maxsplit=1)[0]


def _headline_view(head: pd.DataFrame) -> pd.DataFrame:
    """The headline frame as shown: the paper by first author and year (the full title heads
    its section), the verdict as its short label followed by the engine's words (a claim tested
    in settings whose verdicts differ: "mixed (15 cannot test, 21 holds, ...)")."""
    view = head.copy()
    view["paper"] = [_short_title(t) for t in view["paper"]]
    if "plain" in view:  # the headline in the paper's own terms opens the "ours" cell
        view["ours"] = [
            f"{p}; {o}" if p and o else p or o
            for p, o in zip(view["plain"].fillna(""), view["ours"], strict=True)
        ]
    view["verdict"] = [
        ""
        if not v
        else v
        if v.startswith(lab)
        else f"{lab} ({v})"
        if lab == "mixed"
        else f"{lab}: {v}"
        for lab, v in zip(view["label"], view["verdict"], strict=True)
    ]
    return view


def headline_paragraph(
    s: StudyOutputs, head: pd.DataFrame, claims: pd.DataFrame, max_rows: int = 4
) -> str:
    """A short paragraph (plain text) saying, per headline claim of ``s``, what the paper claims,
    what we measure, the verdict and whether the regime is met -- generated from the rows; with
    more than ``max_rows`` headline rows (one claim tested in many settings) it counts the
    verdicts instead."""
    mine = head[head["study"] == s.name]
    rows = claims[claims["study"] == s.name].set_index("claim_id", drop=False)
    if mine.empty or not mine.iloc[0]["claim_id"]:
        return f"{s.title}: no headline claim is declared; its claims are listed below."
    ids = [h for h in s.headline if h in rows.index]
    if len(ids) > max_rows:  # one claim in many settings: counted, not recited
        labels = pd.Series([verdict_label(rows.loc[c].to_dict()) for c in ids]).value_counts()
        counts = ", ".join(f"{n} {lab}" for lab, n in sorted(labels.items()))
        met = sum(_regime(s, claims, c)[0] is True for c in ids)
        first = rows.loc[ids[0]].to_dict()
        plain = settings_sentence(
            ids,
            [verdict_label(rows.loc[c].to_dict()) for c in ids],
            [_regime(s, claims, c)[0] for c in ids],
        )
        return (
            f"In one sentence: the paper's headline {plain}. "
            f"It is tested in {len(ids)} settings (claims "
            f"{', '.join(ids[:3])}, ...; e.g. {first['claim']}). Verdicts: {counts}. The "
            f"paper's regime premises hold in {met} of {len(ids)}. Declared departures: "
            f"{len(s.departures)}. The paper's claims table gives each setting."
        )
    out = []
    for h in mine.to_dict("records"):
        r = rows.loc[h["claim_id"]].to_dict()
        regime = (
            "its regime premises hold here"
            if h["regime_ok"]
            else "no premise is declared for it"
            if h["regime_ok"] is None
            else f"the paper's regime is not reached here ({h['regime met'][4:]})"
        )
        label = h["label"]
        reads = {
            "holds": "it holds",
            "opposite significant": "the opposite is significant",
            "not established": "it is not established",
            "too few seeds": "there are too few seeds to tell",
            "cannot test": "it cannot be tested as the paper's claim",
            "does not hold": "it does not hold",
        }.get(label, label)
        paper, _, stands = h["paper's number"].partition("; ")
        plain = h.get("plain")
        plain = f"In the paper's terms, {plain}. " if isinstance(plain, str) and plain else ""
        out.append(
            f"The paper claims: {r['claim']} ({r['statistic']}; {paper}, {stands}). {plain}"
            f"We measure {h['ours']}: {reads} "
            f"(verdict: {h['verdict']}); {regime}. Declared departures: {h['departures']}."
        )
    return " ".join(out)


def side_by_side_cells(
    ours: pd.DataFrame, printed: pd.DataFrame, names: Mapping | None = None
) -> tuple[pd.DataFrame, str]:
    """Our table with the paper's printed value beside ours in each cell it has one for:
    ``"16.2 ± 2.1 (paper 49.5; Δ -33.3)"``, and a sentence stating how our rows map to the
    paper's.

    ``printed``: the paper's long rows of this table (``row, loss, metric, value``, optional
    ``id_dataset``); ``names`` (the study's ``paper_names(config)``): ``loss`` (our loss name ->
    the paper's id), ``id_dataset`` (which of the paper's columns to compare, e.g.
    ``"cifar10"``) and ``note`` (what stands for what). A cell gets the paper's value where its
    ``(row, loss, metric)`` is printed; the difference is shown only there -- the same row
    name over different data (our glyphs are not the paper's Textures) is never matched, since
    only printed rows of the same name are."""
    names = dict(names or {})
    to_paper = dict(names.get("loss") or {})
    if "id_dataset" in printed and names.get("id_dataset"):
        printed = printed[printed["id_dataset"] == names["id_dataset"]]
    key = {}
    for r in printed.to_dict("records"):
        key[(str(r.get("row", "")), str(r.get("loss", "")), str(r["metric"]))] = float(r["value"])
    metrics = [c[:-5] for c in ours.columns if c.endswith("_mean") and f"{c[:-5]}_std" in ours]
    if "row" not in ours:
        return ours.copy(), ""
    matched = set()
    cols = {}
    for c in ours.columns:
        if c.endswith("_std") and c[:-4] in metrics:
            continue
        if c.endswith("_mean") and c[:-5] in metrics:
            cols[c[:-5]] = None  # filled below
        else:
            cols[c] = ours[c].tolist()
    for m in metrics:
        cells = []
        for r in ours.to_dict("records"):
            mean, std = _num(r[f"{m}_mean"]), _num(r[f"{m}_std"])
            text = _fmt(mean) if _fmt(std) in ("n/a", "") else f"{_fmt(mean)} ± {_fmt(std)}"
            loss = str(r.get("loss", ""))
            k = (str(r["row"]), to_paper.get(loss, loss), m)
            if k in key:
                matched.add(k[0])
                diff = mean - key[k]
                text += f" (paper {_fmt(key[k])}; Δ {diff:+.2f})"
            cells.append(text)
        cols[m] = cells
    out = pd.DataFrame(cols, index=ours.index)
    ours_rows = list(dict.fromkeys(str(x) for x in ours["row"]))
    paper_rows = list(dict.fromkeys(str(k[0]) for k in key))
    only_ours = [x for x in ours_rows if x not in matched]
    only_paper = [x for x in paper_rows if x not in matched]
    parts = []
    if matched:
        parts.append(
            f"compared with the paper's printed value: row(s) {', '.join(sorted(matched))}"
        )
    if only_ours:
        parts.append(f"ours only (no printed counterpart): {', '.join(only_ours)}")
    if only_paper:
        parts.append(f"the paper's only: {', '.join(only_paper)}")
    where = f" (paper's {names['id_dataset']} column)" if names.get("id_dataset") else ""
    note = f" {names['note']}" if names.get("note") else ""
    return out, f"Rows{where}: " + "; ".join(parts) + "." + note


_CLAIM_VIEW = [
    "kind",
    "claim_id",
    "claim",
    "value",
    "needed",
    "p_value",
    "p_adjusted",
    "power",
    "effect_note",
    "n",
    "verdict",
    "replicates",
    "vs_paper",
]


def _with_needed(df: pd.DataFrame) -> pd.DataFrame:
    """A ``needed`` column: the direction and the threshold (``< 0.5`` is not ``> 0.5``)."""
    df = df.copy()
    df["needed"] = [f"{d} {t:g}" for d, t in zip(df["direction"], df["threshold"], strict=True)]
    return df
