"""The results section: one page and one LaTeX section across every registered study.

Study-agnostic: what a study contributes is read from its ``targets(config)`` (its tables are
the ``tables/*.parquet`` targets, its figures the ``*.png`` targets under ``results/``, its
claims the ``claims.parquet`` target), in the order of the registry (:data:`STUDIES`).

* :func:`collect_claims` — one claims table across all studies (``results/claims_all.*``):
  paper, study, claim, kind, statistic, value, threshold, p, alpha, power, n, the test kind,
  the observed direction and the opposite's p, selection and confirmation data, verdict.
* :func:`table_latex` / :func:`figure_pdf` / :func:`section_tex` — every table as a booktabs
  fragment, every figure as a PDF page, and ``results/results_section.tex``, a document that
  ``\\input``\\ s them in order and compiles with a plain TeX installation (pdflatex, booktabs,
  longtable, graphicx). Figures are the workflow's PNGs embedded at their own resolution (raster
  PDF pages, not vector redraws).
* :func:`audit_records` — the audit's verdict for each table and figure (its recorded input
  hashes checked against the files), written by a rule so a stale or tampered input shows on the
  page.

Everything here writes the same bytes for the same inputs.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

__all__ = [
    "CLAIM_COLUMNS",
    "StudyOutputs",
    "audit_records",
    "collect_claims",
    "figure_pdf",
    "latex_escape",
    "latex_path",
    "section_tex",
    "study_outputs",
    "table_latex",
]

CLAIM_COLUMNS = [
    "paper",
    "study",
    "claim_id",
    "kind",
    "claim",
    "statistic",
    "value",
    "threshold",
    "direction",
    "p_value",
    "alpha",
    "power",
    "n",
    "test",
    "observed",
    "p_opposite",
    "selection",
    "confirmation",
    "verdict",
    "holds",
    "supports",
]


@dataclass
class StudyOutputs:
    """What one study puts on the results page (paths relative to the workflow folder)."""

    name: str
    title: str
    tables: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    claims: str | None = None
    report: str | None = None
    paper_values: str | None = None


def study_outputs(studies: Mapping[str, object], config: dict) -> list[StudyOutputs]:
    """Each study's tables, figures, claims and report, read from its ``targets(config)``."""
    out = []
    for name, study in studies.items():
        targets = list(study.targets(config))
        out.append(
            StudyOutputs(
                name=name,
                title=study.TITLE,
                tables=[t for t in targets if "/tables/" in t and t.endswith(".parquet")],
                figures=[t for t in targets if t.startswith("results/") and t.endswith(".png")],
                claims=next((t for t in targets if t.endswith("claims.parquet")), None),
                report=next((t for t in targets if t.endswith(".html")), None),
                paper_values=_paper_values_path(study),
            )
        )
    return out


def _paper_values_path(study) -> str | None:
    """The study's optional ``PAPER_VALUES`` CSV, relative to the workflow folder."""
    path = getattr(study, "PAPER_VALUES", None)
    if path is None:
        return None
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def latex_path(path: str) -> str:
    """``results/<study>/<ds>/{tables,figures}/<x>.{parquet,png}`` -> ``.../latex/<x>.{tex,pdf}``."""
    p = Path(path)
    ext = ".tex" if p.suffix == ".parquet" else ".pdf"
    return str(p.parent.parent / "latex" / (p.stem + ext))


def collect_claims(claims: Mapping[str, str | Path | pd.DataFrame]) -> pd.DataFrame:
    """Every study's claims table stacked (study order kept), with the :data:`CLAIM_COLUMNS`;
    a column a study's table lacks (an older engine) is NaN."""
    parts = []
    for study, src in claims.items():
        df = src if isinstance(src, pd.DataFrame) else pd.read_parquet(src)
        df = df.copy()
        df["study"] = study
        for c in CLAIM_COLUMNS:
            if c not in df:
                df[c] = math.nan
        parts.append(df[CLAIM_COLUMNS])
    if not parts:
        return pd.DataFrame(columns=CLAIM_COLUMNS)
    out = pd.concat(parts, ignore_index=True)
    out["n"] = pd.to_numeric(out["n"], errors="coerce").fillna(0).astype("int64")
    return out


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_UNICODE = {
    "±": r"$\pm$",
    "×": r"$\times$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "≈": r"$\approx$",
    "→": r"$\rightarrow$",
    "−": "-",
    "–": "--",
    "—": "---",
    "…": r"\ldots{}",
    "°": r"$^\circ$",
    "·": r"$\cdot$",
    "²": r"$^2$",
    "ᵀ": r"$^T$",
    "‖": r"$\|$",
    "’": "'",
    "‘": "`",
    "“": "``",
    "”": "''",
    "é": r"\'e",
    "à": r"\`a",
    "ü": r"\"u",
    "ö": r"\"o",
    "α": r"$\alpha$",
    "β": r"$\beta$",
    "γ": r"$\gamma$",
    "δ": r"$\delta$",
    "ε": r"$\varepsilon$",
    "η": r"$\eta$",
    "θ": r"$\theta$",
    "κ": r"$\kappa$",
    "λ": r"$\lambda$",
    "μ": r"$\mu$",
    "ν": r"$\nu$",
    "π": r"$\pi$",
    "ρ": r"$\rho$",
    "σ": r"$\sigma$",
    "τ": r"$\tau$",
    "φ": r"$\phi$",
    "χ": r"$\chi$",
    "ψ": r"$\psi$",
    "ω": r"$\omega$",
    "Δ": r"$\Delta$",
    "Σ": r"$\Sigma$",
}


def latex_escape(text) -> str:
    """``text`` safe for pdflatex: special characters escaped, the Unicode this project prints
    mapped to LaTeX, anything else written as ``[U+XXXX]``."""
    out = []
    for ch in str(text):
        if ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ord(ch) < 128:
            out.append(ch)
        elif ch in _UNICODE:
            out.append(_UNICODE[ch])
        else:
            out.append(f"[U+{ord(ch):04X}]")
    return "".join(out)


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "n/a"
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
            return f"{v:.3g}"
        return f"{v:.4g}" if abs(v) < 10 else f"{v:.2f}"
    return str(v)


def _display_columns(df: pd.DataFrame) -> list[tuple[str, list[str]]]:
    """Column header -> cell strings, with ``x_mean``/``x_std`` pairs shown as ``mean ± std``."""
    cols, done = [], set()
    for c in df.columns:
        if c in done:
            continue
        if c.endswith("_mean") and f"{c[:-5]}_std" in df:
            base, std = c[:-5], f"{c[:-5]}_std"
            cells = [
                _fmt(m) if _fmt(s) in ("n/a", "") else f"{_fmt(m)} ± {_fmt(s)}"
                for m, s in zip(df[c].tolist(), df[std].tolist(), strict=True)
            ]
            cols.append((base, cells))
            done |= {c, std}
        else:
            cols.append((c, [_fmt(v) for v in df[c].tolist()]))
            done.add(c)
    return cols


def table_latex(df: pd.DataFrame, caption: str) -> str:
    """A booktabs ``longtable`` of ``df`` (``mean ± std`` pairs merged), captioned, in a
    ``\\scriptsize`` group so wide tables fit; numbers right-aligned."""
    cols = _display_columns(df)
    numeric = [
        all(re.fullmatch(r"-?[\d.]+(e[-+]?\d+)?( ± -?[\d.]+(e[-+]?\d+)?)?|n/a", x) for x in cells)
        for _, cells in cols
    ]
    align = "".join("r" if n else "l" for n in numeric)
    head = " & ".join(latex_escape(h) for h, _ in cols) + r" \\"
    lines = [
        r"{\scriptsize",
        rf"\begin{{longtable}}{{{align}}}",
        rf"\caption{{{latex_escape(caption)}}}\\",
        r"\toprule",
        head,
        r"\midrule",
        r"\endfirsthead",
        r"\toprule",
        head,
        r"\midrule",
        r"\endhead",
    ]
    for i in range(len(df)):
        lines.append(" & ".join(latex_escape(cells[i]) for _, cells in cols) + r" \\")
    lines += [r"\bottomrule", r"\end{longtable}", "}"]
    return "\n".join(lines) + "\n"


def figure_pdf(png: str | Path, pdf: str | Path, dpi: int | None = None) -> None:
    """The PNG as one PDF page of its own size (at ``dpi``; default the project's figure DPI),
    with no creation date, so the same PNG gives the same bytes."""
    import matplotlib.image as mpimg
    from matplotlib.backends.backend_pdf import FigureCanvasPdf
    from matplotlib.figure import Figure

    from .analysis.style import DPI
    from .provenance import write_bytes_atomic

    img = mpimg.imread(str(png))
    dpi = dpi or DPI
    h, w = img.shape[:2]
    fig = Figure(figsize=(w / dpi, h / dpi), dpi=dpi)
    FigureCanvasPdf(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.imshow(img, interpolation="none")
    ax.set_axis_off()
    buf = io.BytesIO()
    fig.savefig(
        buf,
        format="pdf",
        dpi=dpi,
        metadata={"CreationDate": None, "Producer": None, "Creator": None},
    )
    write_bytes_atomic(pdf, buf.getvalue())


def _caption_of(path: str) -> str:
    p = Path(path)
    parts = p.parts
    where = "/".join(parts[1:-2]) if len(parts) > 3 else ""
    return f"{where}: {p.stem}" if where else p.stem


def section_tex(studies: Sequence[StudyOutputs], results_dir: str = "results") -> str:
    """``results/results_section.tex``: a document that inputs every table fragment and includes
    every figure PDF, paper by paper, paths relative to ``results_dir``."""
    lines = [
        r"\documentclass[10pt]{article}",
        r"\usepackage[margin=2cm]{geometry}",
        r"\usepackage{booktabs,longtable,graphicx}",
        r"\setlength{\LTcapwidth}{\textwidth}",
        r"\title{Results: softmax overconfidence and OOD behaviour, regenerated}",
        r"\date{}",
        r"\begin{document}",
        r"\maketitle",
    ]
    for s in studies:
        lines.append(rf"\section{{{latex_escape(s.title)}}}")
        for t in s.tables:
            rel = Path(latex_path(t)).relative_to(results_dir).with_suffix("")
            lines.append(rf"\input{{{rel.as_posix()}}}")
        for f in s.figures:
            rel = Path(latex_path(f)).relative_to(results_dir)
            lines += [
                r"\begin{figure}[htbp]",
                r"\centering",
                rf"\includegraphics[width=\linewidth,height=0.8\textheight,keepaspectratio]{{{rel.as_posix()}}}",
                rf"\caption{{{latex_escape(_caption_of(f))}}}",
                r"\end{figure}",
            ]
        lines.append(r"\clearpage")
    lines.append(r"\end{document}")
    return "\n".join(lines) + "\n"


def _prov_of(path: str) -> str:
    p = Path(path)
    return str(p.with_name(p.stem + ".prov.json"))


def audit_records(paths: Iterable[str], root: str | Path = ".") -> dict[str, dict]:
    """For each file (relative to ``root``): its provenance (rule, script, library modules,
    commit, config hash, seeds, recorded input hashes), its sidecar, and the audit's verdict:
    whether every hash recorded along its chain back to the data matches the files on disk, how
    many were checked and which differ. Nothing host-specific is recorded."""
    from .audit import Auditor

    root = Path(root).resolve()
    cache: dict[str, str | None] = {}
    out = {}
    for rel in paths:
        rel = str(rel)
        auditor = Auditor(root)
        auditor._hash_cache = cache  # one hash per file for the whole page
        node = auditor.node(rel)
        auditor.walk(rel, out=io.StringIO())
        prov = _prov_of(rel)
        git = node.git or {}
        out[rel] = {
            "provenance": prov if (root / prov).is_file() else None,
            "rule": node.rule,
            "script": node.script,
            "modules": list(node.modules),
            "git": {"commit": git.get("commit"), "dirty": git.get("dirty")},
            "config_sha256": node.config_sha256,
            "seeds": node.seeds,
            "inputs": {c.name: {"path": c.path, "sha256": c.sha256} for c in node.checks},
            "checked": int(auditor.n_checked),
            "differs": list(auditor.differs),
            "ok": not auditor.differs and auditor.n_checked > 0,
        }
    return out


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
details.rs-prov { font-size: 0.8em; margin-bottom: 1em; }
</style>"""


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


def _table_html(df: pd.DataFrame, sortable: bool = False, cols: Sequence[str] | None = None) -> str:
    shown = _display_columns(df if cols is None else df[list(cols)])
    cls = "rs sortable" if sortable else "rs"
    head = "".join(f'<th data-col="{_esc(h)}">{_esc(h)}</th>' for h, _ in shown)

    def cell(h, text):
        if h == "provenance" and text not in ("", "n/a", "None"):
            href = _esc(_rel_from_report(text))
            return f'<td><a class="rs-prov-link" href="{href}">provenance</a></td>'
        return f"<td>{_esc(text)}</td>"

    rows = []
    for i in range(len(df)):
        rows.append("<tr>" + "".join(cell(h, cells[i]) for h, cells in shown) + "</tr>")
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


_CLAIM_VIEW = ["kind", "claim_id", "claim", "value", "needed", "p_value", "power", "n", "verdict"]


def _with_needed(df: pd.DataFrame) -> pd.DataFrame:
    """A ``needed`` column: the direction and the threshold (``< 0.5`` is not ``> 0.5``)."""
    df = df.copy()
    df["needed"] = [f"{d} {t:g}" for d, t in zip(df["direction"], df["threshold"], strict=True)]
    return df


def study_section_html(s: StudyOutputs, claims: pd.DataFrame, audit: dict) -> str:
    """One paper's part of the page: premises first (a failed premise said at the top), then its
    tables and figures (each with provenance and audit verdict), then its claims."""
    parts = [f'<h2 id="{_esc(s.name)}">{_esc(s.title)}</h2>']
    mine = claims[claims["study"] == s.name]
    prem = mine[mine["kind"] == "premise"]
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
        parts.append(
            f'<div class="rs-premise-fail"><b>Premise not met here:</b> {_esc(names)}. {rest}</div>'
        )
    elif len(prem):
        parts.append(
            f'<div class="rs-premise-ok">All {len(prem)} premises hold: the claims below are tests '
            "in the paper's regime.</div>"
        )
    if len(prem):
        parts.append(
            "<h3>Premises</h3>"
            + _table_html(_with_needed(prem.reset_index(drop=True)), cols=_CLAIM_VIEW)
        )
    paper = pd.read_csv(s.paper_values) if s.paper_values else None
    for t in s.tables:
        parts.append(f"<h3>Table {_esc(Path(t).stem)}</h3>")
        printed = paper[paper["table"] == Path(t).stem] if paper is not None else None
        if printed is not None and len(printed):
            parts.append(
                '<div style="display:flex;gap:2em;align-items:flex-start"><div><b>Ours</b>'
                + _table_html(pd.read_parquet(t))
                + "</div><div><b>The paper's printed values</b>"
                + _table_html(printed.drop(columns="table").reset_index(drop=True))
                + "</div></div>"
            )
        else:
            parts.append(_table_html(pd.read_parquet(t)))
        parts.append(provenance_html(t, audit.get(t)))
    for f in s.figures:
        caption = _caption_of(f)
        parts.append(_figure_html(f, caption))
        parts.append(provenance_html(f, audit.get(f)))
    body = mine[mine["kind"] != "premise"].reset_index(drop=True)
    if len(body):
        counts = body["verdict"].astype(str).str.split(r"[:(]").str[0].str.strip().value_counts()
        summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        parts.append(
            f"<h3>Claims</h3><p>{_esc(summary)}.</p>"
            + _table_html(_with_needed(body), cols=_CLAIM_VIEW)
        )
    if s.claims:
        parts.append(provenance_html(s.claims, audit.get(s.claims)))
    if s.report:
        parts.append(
            f"<p>The full report of this paper, with the paper's printed values beside ours: "
            f'<a href="{_esc(Path(s.report).name)}">{_esc(Path(s.report).name)}</a>.</p>'
        )
    return "\n".join(parts)


def page_html(studies: Sequence[StudyOutputs], claims: pd.DataFrame, audit: dict) -> str:
    """The whole results page body (styles, every paper's section, the sortable claims table)."""
    n_ok = sum(1 for r in audit.values() if r["ok"])
    kinds = claims["kind"].value_counts().to_dict() if len(claims) else {}
    head = (
        f"{_CSS}<p>{len(studies)} papers; {len(claims)} rows: {kinds.get('premise', 0)} premises, "
        f"{kinds.get('claim', 0)} claims, {kinds.get('sanity', 0)} sanity checks. Audit: "
        f"{n_ok} of {len(audit)} tables, figures and claims tables have every recorded hash "
        "matching the files on disk.</p>"
        "<p>How to read a verdict: a claim <b>holds</b> when its statistic lies on the claimed "
        "side and a one-sided test rejects the opposite at the stated alpha; <b>too few seeds to "
        "tell</b> when it is not significant and the test had less than 80 % power to detect "
        "the paper's own effect; <b>cannot test</b> when a premise fails; sanity rows are true by "
        "construction and never count as support.</p>"
    )
    sections = [study_section_html(s, claims, audit) for s in studies]
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
            "power",
            "n",
            "verdict",
            "provenance",
        ],
    )
    return "\n".join(
        [head, *sections, '<h2 id="claims-all">Every claim, every paper</h2>', table, _SORT_JS]
    )
