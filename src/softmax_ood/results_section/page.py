"""The results page's HTML (:func:`page_html`): the headline table, each study's section
(tables, figures, claims, departures, coverage, provenance badges), sortable tables, no network."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .headline import (
    _CLAIM_VIEW,
    HEADLINE_HTML_COLUMNS,
    _departures_shown,
    _departures_touching,
    _headline_view,
    _with_needed,
    headline_frame,
    headline_paragraph,
    side_by_side_cells,
)
from .outputs import _NO_PRINTED, StudyOutputs, _caption_of, _display_columns

# -- the page ------------------------------------------------------------------------------------
_SORT_JS = """<script>
(function () {
  function key(cell) {
    const t = cell.getAttribute("data-sort") ?? cell.textContent.trim();
    const x = parseFloat(t);
    return isNaN(x) ? [1, t.toLowerCase()] : [0, x];
  }
  function sortBy(table, col, dir) {
    const body = table.tBodies[0];
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const ka = key(a.cells[col]), kb = key(b.cells[col]);
      if (ka[0] !== kb[0]) return ka[0] - kb[0];
      return (ka[1] < kb[1] ? -1 : ka[1] > kb[1] ? 1 : 0) * dir;
    });
    rows.forEach((r) => body.appendChild(r));
    table.setAttribute("data-sorted", col + ":" + dir);
  }
  document.querySelectorAll("table.sortable").forEach((table) => {
    Array.from(table.tHead.rows[0].cells).forEach((th, col) => {
      th.style.cursor = "pointer";
      th.title = "sort by this column";
      th.addEventListener("click", () => {
        const [c, d] = (table.getAttribute("data-sorted") || "-1:1").split(":").map(Number);
        sortBy(table, col, c === col ? -d : 1);
      });
    });
    const m = location.hash.match(/sort=([A-Za-z_]+)(?::(-?1))?/);
    if (m) {
      const names = Array.from(table.tHead.rows[0].cells).map((c) => c.getAttribute("data-col"));
      const col = names.indexOf(m[1]);
      if (col >= 0) sortBy(table, col, Number(m[2] || 1));
    }
  });
})();
</script>"""


_CSS = """<style>
.rs-premise-fail { border-left: 4px solid #D55E00; padding: 0.3em 0.8em; background: #fff4ec; }
.rs-premise-ok { border-left: 4px solid #009E73; padding: 0.3em 0.8em; }
.rs-badge-ok { color: #006e50; font-weight: bold; }
.rs-badge-bad { color: #b00020; font-weight: bold; }
table.rs { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
table.rs th, table.rs td { border-bottom: 1px solid #ddd; padding: 2px 6px; text-align: left; }
figure.rs img { max-width: 100%; height: auto; }
.jp-RenderedHTMLCommon table.rs th, .jp-RenderedHTMLCommon table.rs td { text-align: left; }
table.rs-headline { font-size: 0.8em; }
table.rs-headline td { vertical-align: top; }
tr.rs-v-holds td:nth-child(VERDICT) { color: #006e50; font-weight: bold; }
tr.rs-v-opposite td:nth-child(VERDICT) { color: #b00020; font-weight: bold; }
tr.rs-v-other td:nth-child(VERDICT) { color: #8a5a00; font-weight: bold; }
tr.rs-regime-fail td:nth-child(REGIME) { color: #b00020; }
p.rs-summary { max-width: 60em; }
details.rs-prov { font-size: 0.8em; margin-bottom: 1em; }
</style>"""


#: the headline table's colours find their columns by name (a column added before them moved them)
_CSS = _CSS.replace("VERDICT", str(HEADLINE_HTML_COLUMNS.index("verdict") + 1)).replace(
    "REGIME", str(HEADLINE_HTML_COLUMNS.index("regime met") + 1)
)


def _esc(x) -> str:
    import html

    return html.escape(str(x), quote=True)


def _rel_from_report(path: str) -> str:
    """A link from ``reports/results.html`` to a workflow file."""
    return "../" + str(path)


def _badge(rec: dict | None) -> str:
    if rec is None:
        return '<span class="rs-badge-bad">not audited</span>'
    if rec["ok"]:
        return f'<span class="rs-badge-ok">audit: all {rec["checked"]} recorded hashes match</span>'
    why = "; ".join(rec["differs"][:3]) or "nothing recorded"
    return f'<span class="rs-badge-bad">audit: DIFFERS ({_esc(why)})</span>'


def provenance_html(path: str, rec: dict | None) -> str:
    """The audit badge, a link to the provenance sidecar and the chain's first step."""
    if rec is None:
        return f"<p>{_badge(None)}</p>"
    link = (
        f'<a class="rs-prov-link" href="{_esc(_rel_from_report(rec["provenance"]))}">provenance</a>'
        if rec.get("provenance")
        else "no sidecar"
    )
    git = rec.get("git") or {}
    commit = str(git.get("commit") or "unknown")[:12] + (" (dirty)" if git.get("dirty") else "")
    items = [
        f"<li>rule <code>{_esc(rec.get('rule'))}</code>, script <code>{_esc(rec.get('script'))}</code></li>",
        "<li>library modules: "
        + ", ".join(f"<code>{_esc(m)}</code>" for m in rec.get("modules") or [])
        + "</li>",
        f'<li>commit <code class="rs-git">{_esc(commit)}</code>, config sha256 '
        f"<code>{_esc(str(rec.get('config_sha256'))[:16])}</code>, seeds {_esc(rec.get('seeds'))}</li>",
    ] + [
        f"<li>input <code>{_esc(k)}</code>: <code>{_esc(v['path'])}</code> sha256 "
        f'<code class="rs-git">{_esc(v["sha256"][:16])}</code></li>'
        for k, v in sorted((rec.get("inputs") or {}).items())
    ]
    return (
        f'<details class="rs-prov"><summary>{_badge(rec)} · {link} · '
        f"<code>python3 -m softmax_ood.audit {_esc(path)}</code></summary>"
        f"<ul>{''.join(items)}</ul></details>"
    )


def _table_html(
    df: pd.DataFrame,
    sortable: bool = False,
    cols: Sequence[str] | None = None,
    row_ids: Sequence[str] | None = None,
    cls: str = "",
) -> str:
    shown = _display_columns(df if cols is None else df[list(cols)])
    cls = " ".join(["rs", "sortable"] * sortable or ["rs"]) + (f" {cls}" if cls else "")
    head = "".join(f'<th data-col="{_esc(h)}">{_esc(h)}</th>' for h, _ in shown)

    def cell(h, text):
        if h == "provenance" and text not in ("", "n/a", "None"):
            href = _esc(_rel_from_report(text))
            return f'<td><a class="rs-prov-link" href="{href}">provenance</a></td>'
        if h == "details" and text.startswith("#"):
            return f'<td><a class="rs-detail-link" href="{_esc(text)}">details</a></td>'
        return f"<td>{_esc(text)}</td>"

    rows = []
    for i in range(len(df)):
        rid = f' id="{_esc(row_ids[i])}"' if row_ids is not None and row_ids[i] else ""
        rows.append(f"<tr{rid}>" + "".join(cell(h, cells[i]) for h, cells in shown) + "</tr>")
    return (
        f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _figure_html(path: str, caption: str) -> str:
    import base64

    data = base64.b64encode(Path(path).read_bytes()).decode()
    return (
        f'<figure class="rs"><img alt="{_esc(caption)}" src="data:image/png;base64,{data}"/>'
        f"<figcaption>{_esc(caption)}</figcaption></figure>"
    )


def departures_html(s: StudyOutputs) -> str:
    """The paper's declared departures (setting, the paper's value and where it says so, ours,
    why, the claims it touches, the configs it applies to), or a sentence saying there are
    none."""
    if not s.departures:
        return (
            f'<h3 id="departures-{_esc(s.name)}">Departures from the paper</h3>'
            "<p>None declared by this study.</p>"
        )
    df = _departures_shown(s)
    return (
        f'<h3 id="departures-{_esc(s.name)}">Departures from the paper ({len(df)})</h3>'
        + _table_html(df)
    )


COVERAGE_VIEW = ["item", "what", "where it runs", "why", "covered by", "in this build"]


def coverage_frame(s: StudyOutputs, claims: pd.DataFrame) -> pd.DataFrame:
    """The paper's coverage rows as shown: item, what (with its section), where it runs, why,
    what covers it, and what of that this build has (its claim rows counted from the claims
    table, its tables and figures among this build's outputs)."""
    import fnmatch

    from ..analysis.coverage import covered_by

    ids = list(claims.loc[claims["study"] == s.name, "claim_id"].astype(str))
    made = {Path(t).stem for t in s.tables} | {Path(f).stem for f in s.figures}
    rows = []
    for r in s.coverage:
        named = covered_by(r)
        n = len({i for p in named["claims"] for i in fnmatch.filter(ids, p)})
        outputs = [o for o in named["table"] + named["figure"] if o in made]
        here = ([f"{n} claim rows"] if n else []) + outputs
        rows.append(
            {
                "item": r["item"],
                "what": f"{r['what']} ({r['section']})" if r.get("section") else r.get("what", ""),
                "where it runs": r["where"],
                "why": r["why"],
                "covered by": r["covered_by"],
                "in this build": ", ".join(here) or "-",
            }
        )
    return pd.DataFrame(rows, columns=COVERAGE_VIEW)


def coverage_html(s: StudyOutputs, claims: pd.DataFrame) -> str:
    """What of the paper runs here: every item of its results (figure, table, theorem,
    quantitative claim), where it runs, why, and what this build has of it; "" for a study
    without a paper of its own."""
    if not s.coverage:
        return ""
    from ..analysis.coverage import summary

    return (
        f'<h3 id="coverage-{_esc(s.name)}">What of the paper runs here</h3>'
        f"<p>{_esc(summary(s.coverage))} Declared in the study's coverage.csv; the study's "
        "page in docs/studies shows the same table.</p>" + _table_html(coverage_frame(s, claims))
    )


def headline_html(studies: Sequence[StudyOutputs], claims: pd.DataFrame) -> str:
    """The headline table (every paper's headline claims) and one generated paragraph per
    paper."""
    head = headline_frame(studies, claims)
    if head.empty:
        return ""
    view = _headline_view(head)
    table = _table_html(view, cols=HEADLINE_HTML_COLUMNS, cls="rs-headline")
    table = _mark_verdicts(table, list(head["label"]), list(head["regime_ok"]))
    paras = "".join(
        f'<p class="rs-summary"><b><a href="#{_esc(s.name)}">{_esc(s.title)}</a>.</b> '
        f"{_esc(headline_paragraph(s, head, claims))}</p>"
        for s in studies
    )
    return f'<h2 id="headline">Headline claims</h2>{table}{paras}'


_LABEL_CLASS = {"holds": "rs-v-holds", "opposite significant": "rs-v-opposite"}


def _mark_verdicts(table: str, labels: Sequence[str], regime: Sequence) -> str:
    """Colour the headline rows: a held claim green, an opposite result red, others amber;
    a failed regime marked."""
    out, start = [], 0
    for lab, ok in zip(labels, regime, strict=True):
        i = table.index("<tr>", table.index("<tbody>") if not out else start)
        cls = _LABEL_CLASS.get(lab, "rs-v-other") + (" rs-regime-fail" if ok is False else "")
        out.append(table[start:i] + f'<tr class="{cls}">')
        start = i + len("<tr>")
    return "".join(out) + table[start:]


def _premise_banner(mine: pd.DataFrame, prem: pd.DataFrame) -> str | None:
    """The line above a paper's premises: which premise failed here and which claims rest on
    it, or that every premise holds (naming the borderline ones); ``None`` without premises."""
    failed = prem[~prem["holds"].astype(bool)] if "holds" in prem else prem.iloc[0:0]
    if len(failed):
        names = ", ".join(f"{r.claim_id} ({r.verdict})" for r in failed.itertuples())
        gated = mine[
            (mine["kind"] != "premise")
            & mine["verdict"].astype(str).str.match(r"cannot test(: premise| as the paper)")
        ]["claim_id"].tolist()
        rest = (
            f"The claims that rest on it read &quot;cannot test here&quot; ({_esc(', '.join(gated))}): "
            "they are not evidence against the paper."
            if gated
            else "No claim rests on it; the claims below are read as they stand."
        )
        return (
            f'<div class="rs-premise-fail"><b>Premise not met here:</b> {_esc(names)}. {rest}</div>'
        )
    if not len(prem):
        return None
    from ..analysis.claims import BORDERLINE_P

    thin = prem[prem["verdict"].astype(str).str.contains("(borderline", regex=False)]
    note = (
        f" Borderline (p between {BORDERLINE_P:g} and alpha): "
        f"{_esc(', '.join(thin['claim_id']))}; the rows resting on it say so."
        if len(thin)
        else ""
    )
    return (
        f'<div class="rs-premise-ok">All {len(prem)} premises hold: the claims below are tests '
        f"in the paper's regime.{note}</div>"
    )


def _study_tables_html(s: StudyOutputs, audit: dict) -> list[str]:
    """A paper's tables, each beside the paper's printed values where it has them, with its
    provenance and audit verdict."""
    parts = []
    paper = pd.read_csv(s.paper_values, keep_default_na=False) if s.paper_values else None
    for t in s.tables:
        parts.append(f"<h3>Table {_esc(Path(t).stem)}</h3>")
        printed = paper[paper["table"] == Path(t).stem] if paper is not None else None
        if printed is not None and len(printed):
            beside, note = side_by_side_cells(pd.read_parquet(t), printed, s.paper_names)
            parts.append(
                '<p class="rs-paper-note">Ours (mean ± std over seeds) with the paper\'s '
                f"printed value beside it where the paper has that row. {_esc(note)}</p>"
                + _table_html(beside, cls="rs-beside")
            )
        else:
            parts.append(
                f'<p class="rs-paper-note">{_esc(_NO_PRINTED)}</p>'
                + _table_html(pd.read_parquet(t))
            )
        parts.append(provenance_html(t, audit.get(t)))
    return parts


def _study_claims_html(s: StudyOutputs, body: pd.DataFrame) -> str:
    """A paper's claims (premises aside): the count per verdict, then the table with the
    departures each claim touches."""
    counts = body["verdict"].astype(str).str.split(r"[:(]").str[0].str.strip().value_counts()
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    view = _with_needed(body)
    view["departures"] = [
        ", ".join(d["setting"] for d in _departures_touching(s, c)) for c in view["claim_id"]
    ]
    return f'<h3 id="claims-{_esc(s.name)}">Claims</h3><p>{_esc(summary)}.</p>' + _table_html(
        view,
        cols=_CLAIM_VIEW + ["departures"],
        row_ids=[f"claim-{s.name}-{c}" for c in view["claim_id"]],
    )


def study_section_html(s: StudyOutputs, claims: pd.DataFrame, audit: dict) -> str:
    """One paper's part of the page: premises first (a failed premise said at the top), then its
    tables and figures (each with provenance and audit verdict), then its claims."""
    parts = [f'<h2 id="{_esc(s.name)}">{_esc(s.title)}</h2>']
    mine = claims[claims["study"] == s.name]
    prem = mine[mine["kind"] == "premise"]
    banner = _premise_banner(mine, prem)
    if banner is not None:
        parts.append(banner)
    if len(prem):
        parts.append(
            "<h3>Premises</h3>"
            + _table_html(_with_needed(prem.reset_index(drop=True)), cols=_CLAIM_VIEW)
        )
    parts += _study_tables_html(s, audit)
    for f in s.figures:
        caption = _caption_of(f)
        parts.append(_figure_html(f, caption))
        parts.append(provenance_html(f, audit.get(f)))
    body = mine[mine["kind"] != "premise"].reset_index(drop=True)
    if len(body):
        parts.append(_study_claims_html(s, body))
    parts.append(coverage_html(s, claims))
    parts.append(departures_html(s))
    if s.claims:
        parts.append(provenance_html(s.claims, audit.get(s.claims)))
    if s.report:
        parts.append(
            f"<p>The full report of this paper, with the paper's printed values beside ours: "
            f'<a href="{_esc(Path(s.report).name)}">{_esc(Path(s.report).name)}</a>.</p>'
        )
    return "\n".join(parts)


def page_html(studies: Sequence[StudyOutputs], claims: pd.DataFrame, audit: dict) -> str:
    """The whole results page body: styles, the headline table first (on the first screen),
    then the counts, the audit's summary and how to read a verdict, every paper's section and
    the sortable claims table."""
    n_ok = sum(1 for r in audit.values() if r["ok"])
    kinds = claims["kind"].value_counts().to_dict() if len(claims) else {}
    head = (
        f"<p>{len(studies)} papers; {len(claims)} rows: {kinds.get('premise', 0)} premises, "
        f"{kinds.get('claim', 0)} claims, {kinds.get('sanity', 0)} sanity checks. Audit: "
        f"{n_ok} of {len(audit)} tables, figures and claims tables have every recorded hash "
        "matching the files on disk.</p>"
        "<p>How to read a verdict: a claim <b>holds</b> when its statistic lies on the claimed "
        "side and a one-sided test rejects the opposite at the stated alpha after the family "
        "adjustment: each paper's tested claims are one family, and the verdict uses their "
        "Benjamini&ndash;Hochberg adjusted p (p_adjusted, beside the raw p_value; a headline "
        "claim also shows Holm's p over the headline claims, p_holm, and says when it holds on "
        "the first but not the second; premises and sanity rows are not adjusted); a claim "
        "significant alone but not after the adjustment says so in its verdict; <b>does not "
        "hold</b> when the test had at least 80 % power to detect the paper's own effect and did "
        "not, or the opposite direction is significant; <b>too few seeds to tell</b> when it is "
        "not significant and the power was below 80 % (&quot;estimate in the opposite "
        "direction&quot; when it lies on the other side); <b>cannot test</b> when a premise "
        "fails (&quot;here the opposite is significant&quot; is added when the data go "
        "significantly the other way, so a failed premise never hides that, and what was "
        "measured when the test had the power and saw nothing). A premise that holds with p "
        "between 0.01 and 0.05 is <b>borderline</b>, and every row resting on it says so. An "
        "equivalence claim (a match within a bar) <b>holds</b> when its interval lies inside the "
        "bar, <b>does not hold</b> when the interval lies outside it, and is <b>not "
        "established</b> when the interval straddles the bar. Sanity rows are true by "
        "construction and never count as support. <b>replicates</b>: the same claims judged "
        "again on a second, disjoint seed set (config replication; the study's compute re-run "
        "on it, its own family adjustment): &quot;yes&quot; when the verdict there has the "
        "same words, &quot;no: &hellip;&quot; with the verdict the fresh seeds gave, &quot;not "
        "replicated here&quot; when the study (or the frames a row rests on) is not re-run; "
        "the verdict itself is always the first seed set's.</p>"
    )
    # the headline first: on the first screen, before the counts and how to read a verdict
    sections = [headline_html(studies, claims), head]
    sections += [study_section_html(s, claims, audit) for s in studies]
    allc = _with_needed(claims.reset_index(drop=True))
    # every claim row links to the provenance record of its study's claims table
    prov = {s.name: (audit.get(s.claims) or {}).get("provenance") for s in studies if s.claims}
    allc["provenance"] = [prov.get(st) or "" for st in allc["study"]]
    table = _table_html(
        allc,
        sortable=True,
        cols=[
            "paper",
            "claim_id",
            "kind",
            "statistic",
            "value",
            "needed",
            "p_value",
            "p_adjusted",
            "power",
            "n",
            "verdict",
            "provenance",
        ],
    )
    return "\n".join(
        [_CSS, *sections, '<h2 id="claims-all">Every claim, every paper</h2>', table, _SORT_JS]
    )
