"""The results section: one page and one LaTeX section across every registered study.

Study-agnostic: what a study contributes is read from its ``targets(config)`` (its tables are
the ``tables/*.parquet`` targets, its figures the ``*.png`` targets under ``results/``, its
claims the ``claims.parquet`` target), in the order of the registry (:data:`STUDIES`).

* :func:`collect_claims` — one claims table across all studies (``results/claims_all.*``):
  paper, study, claim, kind, statistic, value, threshold, p, the family-adjusted p and how,
  alpha, power, n, the test kind,
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

from .analysis.claims import NOT_REPLICATED
from .analysis.coverage import coverage_rows

__all__ = [
    "CLAIM_COLUMNS",
    "DEPARTURE_COLUMNS",
    "OPTIONAL_CLAIM_COLUMNS",
    "claim_interval",
    "claims_grouped",
    "departure_records",
    "headline_frame",
    "headline_ids",
    "headline_paragraph",
    "premises_of",
    "side_by_side_cells",
    "study_departures",
    "StudyOutputs",
    "audit_records",
    "collect_claims",
    "figure_pdf",
    "latex_escape",
    "latex_path",
    "headline_tex",
    "section_tex",
    "study_outputs",
    "study_table_latex",
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
    "p_adjusted",
    "p_holm",
    "adjustment",
    "alpha",
    "power",
    "effect_used",
    "effect_note",
    "p_paper",
    "vs_paper",
    "n",
    "test",
    "observed",
    "p_opposite",
    "selection",
    "confirmation",
    "verdict",
    "replicates",
    "holds",
    "supports",
    "borderline",
    "effect",
    "paper_value",
    "effect_source",
    "detail",
]
#: columns a study's table may add (used on the page where present): its own interval of the
#: statistic
OPTIONAL_CLAIM_COLUMNS = ["ci_low", "ci_high"]


@dataclass
class StudyOutputs:
    """What one study puts on the results page (paths relative to the workflow folder).

    ``headline``: the ids of its headline claims (the study's optional ``HEADLINE``, id patterns
    matched against its claim ids; without it every claim of kind ``claim`` named ``headline``,
    else none); ``requires``: each headline claim's premises (through ``all_of`` parts too);
    ``departures``: its declared departures from the paper as records of the columns
    :data:`DEPARTURE_COLUMNS`; ``paper_names``: how its tables' names map to the paper's
    printed ones (the optional ``paper_names(config)`` hook, see :func:`side_by_side_cells`)."""

    name: str
    title: str
    tables: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    claims: str | None = None
    report: str | None = None
    paper_values: str | None = None
    headline: list[str] = field(default_factory=list)
    requires: dict[str, list[str]] = field(default_factory=dict)
    departures: list[dict] = field(default_factory=list)
    paper_names: dict = field(default_factory=dict)
    #: where each item of its paper runs (the optional PAPER_ITEMS and coverage hooks)
    coverage: list[dict] = field(default_factory=list)
    #: its optional ``headline_plain(claims)`` hook (a headline in the paper's own terms) as
    #: ``"module:function"``: plain data, like every field (the rules pass them as JSON)
    headline_plain: str | None = None


def study_outputs(studies: Mapping[str, object], config: dict) -> list[StudyOutputs]:
    """Each study's tables, figures, claims and report, read from its ``targets(config)``, with
    its headline claims, their premises, its departures and its paper-name mapping."""
    out = []
    for name, study in studies.items():
        targets = list(study.targets(config))
        specs = list(study.claim_specs(config))
        headline = headline_ids(specs, study.HEADLINE)
        names = getattr(study, "paper_names", None)
        out.append(
            StudyOutputs(
                name=name,
                title=study.TITLE,
                tables=[t for t in targets if "/tables/" in t and t.endswith(".parquet")],
                figures=[t for t in targets if t.startswith("results/") and t.endswith(".png")],
                claims=next((t for t in targets if t.endswith("claims.parquet")), None),
                report=next((t for t in targets if t.endswith(".html")), None),
                paper_values=_paper_values_path(study),
                headline=headline,
                requires={h: premises_of(specs, h) for h in headline},
                departures=study_departures(study, config),
                paper_names=dict(names(config)) if callable(names) else {},
                coverage=coverage_rows(study, config),
                headline_plain=f"{study.__name__}:headline_plain"
                if callable(getattr(study, "headline_plain", None))
                else None,
            )
        )
    return out


def headline_ids(specs: Sequence, patterns: Sequence[str] | None) -> list[str]:
    """The ids of ``specs`` (ClaimSpecs) matching ``patterns`` (``fnmatch`` patterns, in the
    patterns' order, each id once); without patterns the claim named ``headline`` if any."""
    from fnmatch import fnmatchcase

    ids = [s.id for s in specs if s.kind == "claim"]
    if patterns is None:
        return [i for i in ids if i == "headline"]
    out = []
    for pat in patterns:
        out += [i for i in ids if fnmatchcase(i, pat) and i not in out]
    return out


def premises_of(specs: Sequence, cid: str) -> list[str]:
    """The premises claim ``cid`` rests on: its ``requires`` and those of its ``all_of`` parts
    (recursively), each once, in order."""
    by_id = {s.id: s for s in specs}
    out: list[str] = []

    def visit(i, seen=()):
        s = by_id.get(i)
        if s is None or i in seen:
            return
        for r in s.requires:
            if by_id.get(r) is not None and by_id[r].kind == "premise":
                if r not in out:
                    out.append(r)
            else:
                visit(r, (*seen, i))
        for part in s.all_of:
            visit(part, (*seen, i))

    visit(cid)
    return out


#: a departure's fields (INTERFACES §2, ``analysis.departures.departures_frame``)
DEPARTURE_COLUMNS = ["setting", "paper", "section", "ours", "why", "claims", "scale"]
#: an older study's departure records (Seddik's ``where/printed/used/reason/kind``) -> the fields
_LEGACY_DEPARTURE = {"where": "section", "printed": "paper", "used": "ours", "reason": "why"}


def departure_records(deps) -> list[dict]:
    """Departures (``Departure`` dataclasses, dicts with the :data:`DEPARTURE_COLUMNS`, older
    ``where/printed/used/reason`` dicts, or a frame) as plain records of those columns, with
    ``claims`` ``", "``-joined."""
    import dataclasses

    if isinstance(deps, pd.DataFrame):
        deps = deps.to_dict("records")
    out = []
    for d in deps or []:
        if dataclasses.is_dataclass(d):
            d = dataclasses.asdict(d)
        d = dict(d)
        for old, new in _LEGACY_DEPARTURE.items():
            if old in d and new not in d:
                d[new] = d.pop(old)
        if "setting" not in d:
            d["setting"] = d.get("kind", "")
        claims = d.get("claims") or ()
        if not isinstance(claims, str):
            claims = ", ".join(str(c) for c in claims)
        rec = {c: str(d.get(c) or "") for c in DEPARTURE_COLUMNS}
        rec["claims"] = claims
        rec["scale"] = rec["scale"] or "all"
        out.append(rec)
    return out


def study_departures(study, config: dict) -> list[dict]:
    """The study's declared departures from its paper (its ``departures(config)`` hook,
    INTERFACES §2) as records; [] when it declares none."""
    return departure_records(study.departures(config))


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
    """Every study's claims table stacked (study order kept), with the :data:`CLAIM_COLUMNS`
    (a column a study's table lacks, from an older engine, is NaN) and those of the
    :data:`OPTIONAL_CLAIM_COLUMNS` that any study's table has."""
    parts = []
    for study, src in claims.items():
        df = src if isinstance(src, pd.DataFrame) else pd.read_parquet(src)
        df = df.copy()
        df["study"] = study
        parts.append(df)
    optional = [c for c in OPTIONAL_CLAIM_COLUMNS if any(c in df for df in parts)]
    cols = CLAIM_COLUMNS + optional
    if not parts:
        return pd.DataFrame(columns=CLAIM_COLUMNS)
    for df in parts:
        for c in cols:
            if c not in df:
                df[c] = math.nan
    out = pd.concat([df[cols] for df in parts], ignore_index=True)
    out["n"] = pd.to_numeric(out["n"], errors="coerce").fillna(0).astype("int64")
    out["replicates"] = out["replicates"].fillna(NOT_REPLICATED)  # a table from before replication
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
    "Φ": r"$\Phi$",
    "ξ": r"$\xi$",
    "ℓ": r"$\ell$",
    "§": r"\S{}",
    "¹": r"$^1$",
    "⁻": r"$^-$",
    "₂": r"$_2$",
    "₋": r"$_-$",
    "ᵢ": r"$_i$",
    "½": r"$\frac12$",
    "′": r"$'$",
    "″": r"$''$",
    "←": r"$\leftarrow$",
    "∂": r"$\partial$",
    "∈": r"$\in$",
    "√": r"$\surd$",
    "∝": r"$\propto$",
    "∞": r"$\infty$",
    "≠": r"$\neq$",
    "≡": r"$\equiv$",
    "⊗": r"$\otimes$",
    "⊙": r"$\odot$",
    "∑": r"$\sum$",
    "∼": r"$\sim$",
    "ỹ": r"\~{y}",
}
#: combining accents: set over the character before them (``x̃`` -> ``\~{x}``, ``ξ̃`` -> ``$\tilde{\xi}$``)
_COMBINING = {"\u0303": (r"\~", r"\tilde"), "\u0304": (r"\=", r"\bar")}


def latex_escape(text) -> str:
    """``text`` safe for pdflatex: special characters escaped, the Unicode this project prints
    mapped to LaTeX, anything else written as ``[U+XXXX]``."""
    out: list[str] = []
    for ch in str(text):
        if ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ord(ch) < 128:
            out.append(ch)
        elif ch in _COMBINING and out:
            text_accent, math_accent = _COMBINING[ch]
            base = out.pop()
            if _is_math(base):
                out.append(f"${math_accent}{{{base[1:-1]}}}$")
            else:
                out.append(f"{text_accent}{{{base}}}")
        elif ch in _UNICODE:
            piece = _UNICODE[ch]
            script = piece[1] in "_^" if _is_math(piece) else False
            if script and out and _is_math(out[-1]) and not _SCRIPTED.search(out[-1]):
                # ‖₂ -> $\|_2$ (a sub/superscript on what precedes it; never two in a row)
                out[-1] = out[-1][:-1] + piece[1:]
            else:
                out.append(piece)
        else:
            out.append(f"[U+{ord(ch):04X}]")
    return "".join(out)


_SCRIPTED = re.compile(r"[_^][^$]*\$$")


def _is_math(piece: str) -> bool:
    return len(piece) > 2 and piece.startswith("$") and piece.endswith("$")


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


#: a table wider than the text is scaled down to the text width (graphicx's ``\width``), never
#: up, and one still taller than 0.85 of the text height down to that (a box cannot break
#: across pages: taller, it runs off the page's foot); defined in each fragment too, so a
#: fragment ``\input`` elsewhere still compiles
_FIT = (
    r"\providecommand{\rsfit}[1]{\resizebox*{!}{\ifdim\totalheight>0.85\textheight"
    r" 0.85\textheight\else\totalheight\fi}{\resizebox{\ifdim\width>\linewidth\linewidth"
    r"\else\width\fi}{!}{#1}}}"
)
#: the lines of ``\scriptsize`` text one part of a table holds (with its caption, a page of
#: the text height before any scaling): a part ends at this many lines or ``rows_per_part`` rows
_LINES_PER_PART = 66
#: a text column longer than this many characters is set as a paragraph column
_WRAP_CHARS = 30
_BREAK_AFTER = re.compile(r"(\\_|[:/,=@]|\.(?=[A-Za-z]))")


def _breakable(tex: str) -> str:
    """Escaped text that may break after ``_ : / , =`` (long claim ids, paths) in a paragraph
    column."""
    return _BREAK_AFTER.sub(lambda m: m.group(1) + r"\allowbreak{}", tex)


def table_latex(df: pd.DataFrame, caption: str, note: str = "", rows_per_part: int = 40) -> str:
    """``df`` as booktabs tables (``mean ± std`` pairs merged) that fit the text width: numbers
    right-aligned, long text in paragraph columns (``p{..em}``, breakable after ``_ : / , =``),
    the whole scaled down to the text width when still wider (:data:`_FIT`), in parts of
    ``rows_per_part`` rows (a page each at most) with the caption repeated "(continued)";
    ``note`` is set under the caption. Not floats: the document keeps the order it is given."""
    cols = _display_columns(df)
    numeric = [
        all(re.fullmatch(r"-?[\d.]+(e[-+]?\d+)?( ± -?[\d.]+(e[-+]?\d+)?)?|n/a", x) for x in cells)
        for _, cells in cols
    ]
    longest = [max([len(h), *(len(x) for x in cells)]) for h, cells in cols]
    wrap = [not n and m > _WRAP_CHARS for n, m in zip(numeric, longest, strict=True)]
    wrap, widths = _column_ems(longest, wrap, numeric)
    align = "".join(
        rf">{{\raggedright\arraybackslash}}p{{{e:.1f}em}}" if w else "r" if n else "l"
        for n, w, e in zip(numeric, wrap, widths, strict=True)
    )

    def esc(text, w):
        return _breakable(latex_escape(text)) if w else latex_escape(text)

    head = " & ".join(esc(h, w) for (h, _), w in zip(cols, wrap, strict=True)) + r" \\"
    lines = [_FIT, r"{\scriptsize"]
    starts = _part_starts(cols, wrap, widths, len(df), rows_per_part)
    ends = [*starts[1:], len(df)]
    for k, (start, end) in enumerate(zip(starts, ends, strict=True)):
        cap = caption if k == 0 else f"{caption} (continued)"
        # caption, note and rows in one unbreakable box: never a caption alone at a page's foot
        # (the rows are at most 0.85 of the text height, :data:`_FIT`)
        lines += [
            r"\begin{center}",
            r"\begin{minipage}{\linewidth}\centering",
            r"\makeatletter\def\@captype{table}\makeatother",
            rf"\caption{{{latex_escape(cap)}}}",
        ]
        if note and k == 0:
            lines.append(rf"\parbox{{\linewidth}}{{\sloppy {latex_escape(note)}}}\par\smallskip")
        lines += [rf"\rsfit{{\begin{{tabular}}{{{align}}}", r"\toprule", head, r"\midrule"]
        for i in range(start, end):
            lines.append(
                " & ".join(esc(cells[i], w) for (_, cells), w in zip(cols, wrap, strict=True))
                + r" \\"
            )
        lines += [r"\bottomrule", r"\end{tabular}}", r"\end{minipage}", r"\end{center}"]
    lines.append("}")
    return "\n".join(lines) + "\n"


#: the text width in ``\\scriptsize`` em (500 pt of letter paper less 2 cm margins, 7.35 pt
#: em), and the narrowest paragraph column a table wants before it is too wide
_TEXT_EM, _MIN_WRAP_EM = 66, 8


def _column_ems(
    longest: Sequence[int], wrap: Sequence[bool], numeric: Sequence[bool]
) -> tuple[list[bool], list[float]]:
    """Which columns are paragraph columns and each column's width in ``\\scriptsize`` em.

    A paragraph column wants 0.45 em per character of its longest cell (8 to 24 em); the other
    columns take about 0.5 em a character, each with its separators (1.7 em). When that is
    wider than the text, every text column longer than 16 characters becomes a paragraph
    column too, and the room left by the others is shared among them in proportion to the
    square root of their longest cell (at least 8 em each), so a table fits the text width
    without scaling where it can -- a scaled table's type shrinks with it."""
    want = [
        min(max(m * 0.45, _MIN_WRAP_EM), 24) if w else 0.5 * m
        for m, w in zip(longest, wrap, strict=True)
    ]
    if sum(want) + 1.7 * len(want) <= _TEXT_EM:
        return list(wrap), want
    wrap = [w or (not n and m > 16) for w, n, m in zip(wrap, numeric, longest, strict=True)]
    fixed = sum(0.5 * m for m, w in zip(longest, wrap, strict=True) if not w)
    room = _TEXT_EM - fixed - 1.7 * len(want)
    weight = [math.sqrt(min(m, 400)) if w else 0.0 for m, w in zip(longest, wrap, strict=True)]
    total = sum(weight)
    ems = [
        min(max(room * x / total, _MIN_WRAP_EM), 0.45 * m + 1) if w else 0.5 * m
        for x, m, w in zip(weight, longest, wrap, strict=True)
    ]
    return wrap, ems


def _part_starts(cols, wrap, width, n: int, rows_per_part: int) -> list[int]:
    """The first row of each part of a table: a new part after ``rows_per_part`` rows or once
    the rows' estimated lines pass :data:`_LINES_PER_PART` (a paragraph cell of ``w`` em holds
    about ``2 w`` characters a line in ``\\scriptsize``), so no part is taller than a page."""
    per_row = [
        max(
            [1]
            + [
                math.ceil(len(cells[i]) / (2 * w)) + 1
                for (_, cells), wr, w in zip(cols, wrap, width, strict=True)
                if wr
            ]
        )
        for i in range(n)
    ]
    starts, used, rows = [0], 0, 0
    for i, h in enumerate(per_row):
        if rows and (rows >= rows_per_part or used + h > _LINES_PER_PART):
            starts.append(i)
            used, rows = 0, 0
        used, rows = used + h, rows + 1
    return starts


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


def _para_tex(text: str) -> str:
    return _breakable(latex_escape(text))


def headline_tex(studies: Sequence[StudyOutputs], claims: pd.DataFrame) -> str:
    """The headline table and one generated paragraph per paper, as LaTeX."""
    head = headline_frame(studies, claims)
    if head.empty:
        return ""
    view = _headline_view(head)
    view["verdict"] = [
        f"{v}; replicates: {r}" if v and r else v
        for v, r in zip(view["verdict"], view["replicates"], strict=True)
    ]
    view["details"] = [
        f"Section {i + 1}" for i in [[s.name for s in studies].index(st) for st in view["study"]]
    ]
    out = [
        r"\section*{Headline claims}",
        table_latex(
            view[HEADLINE_COLUMNS].reset_index(drop=True),
            "Headline claims: the paper's number, ours with its interval, the verdict and "
            "whether the paper's regime is met here",
        ).rstrip("\n"),
    ]
    for s in studies:
        out.append(
            rf"\paragraph{{{latex_escape(_short_title(s.title))}.}} "
            + _para_tex(headline_paragraph(s, head, claims))
        )
    return "\n".join(out) + "\n"


def claims_tex(s: StudyOutputs, claims: pd.DataFrame) -> str:
    """The paper's premises and claims (what is needed, ours, p, power, n, the verdict and the
    declared departures touching each) as a table that fits the text width."""
    mine = claims[claims["study"] == s.name].reset_index(drop=True)
    if mine.empty:
        return ""
    view = _with_needed(mine)
    view["departures"] = [
        ", ".join(d["setting"] for d in _departures_touching(s, c)) for c in view["claim_id"]
    ]
    cols = _CLAIM_VIEW
    return table_latex(view[cols + ["departures"]], f"{s.name}: premises, claims and sanity checks")


def departures_tex(s: StudyOutputs) -> str:
    if not s.departures:
        return "No departure from the paper is declared by this study.\n"
    return table_latex(_departures_shown(s), f"{s.name}: departures from the paper")


def section_tex(
    studies: Sequence[StudyOutputs],
    results_dir: str = "results",
    claims: pd.DataFrame | None = None,
) -> str:
    """``results/results_section.tex``: a document that opens with the headline table and
    paragraphs (when ``claims`` are given), then inputs every table fragment, the departures
    and every figure PDF, paper by paper, paths relative to ``results_dir``. Every table fits
    the text width (:func:`table_latex`)."""
    lines = [
        r"\documentclass[10pt]{article}",
        r"\usepackage[margin=2cm]{geometry}",
        r"\usepackage{booktabs,array,graphicx}",
        r"\setlength{\emergencystretch}{3em}",
        _FIT,
        r"\title{Results: softmax overconfidence and OOD behaviour, regenerated}",
        r"\date{}",
        r"\begin{document}",
        r"\maketitle",
    ]
    if claims is not None:
        lines.append(headline_tex(studies, claims).rstrip("\n"))
        lines.append(r"\clearpage")
    for s in studies:
        lines.append(rf"\section{{{latex_escape(s.title)}}}")
        if claims is not None:
            lines.append(_para_tex(headline_paragraph(s, headline_frame([s], claims), claims)))
            lines.append(claims_tex(s, claims).rstrip("\n"))
        lines.append(r"\subsection*{Departures from the paper}")
        lines.append(departures_tex(s).rstrip("\n"))
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


#: said over a table the study records no printed value of the paper for (no row of its
#: ``PAPER_VALUES`` names it), so a reader does not hunt for the paper's number
_NO_PRINTED = (
    "Ours only: the study records no printed value of the paper for this table (its paper "
    "values name no row of it), so there is nothing to set beside ours."
)


def study_table_latex(s: StudyOutputs, table: str) -> str:
    """One of the study's tables as LaTeX, the paper's printed values beside ours where the
    study ships them (:func:`side_by_side_cells`)."""
    ours = pd.read_parquet(table)
    caption = f"{s.name}: {Path(table).stem}"
    if s.paper_values:
        paper = pd.read_csv(s.paper_values, keep_default_na=False)
        printed = paper[paper["table"] == Path(table).stem]
        if len(printed):
            beside, note = side_by_side_cells(ours, printed, s.paper_names)
            return table_latex(
                beside, caption + " (ours, mean ± std; the paper's value beside)", note
            )
    return table_latex(ours, caption, _NO_PRINTED)


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

    from .analysis.coverage import covered_by

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
    from .analysis.coverage import summary

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
        from .analysis.claims import BORDERLINE_P

        thin = prem[prem["verdict"].astype(str).str.contains("(borderline", regex=False)]
        note = (
            f" Borderline (p between {BORDERLINE_P:g} and alpha): "
            f"{_esc(', '.join(thin['claim_id']))}; the rows resting on it say so."
            if len(thin)
            else ""
        )
        parts.append(
            f'<div class="rs-premise-ok">All {len(prem)} premises hold: the claims below are tests '
            f"in the paper's regime.{note}</div>"
        )
    if len(prem):
        parts.append(
            "<h3>Premises</h3>"
            + _table_html(_with_needed(prem.reset_index(drop=True)), cols=_CLAIM_VIEW)
        )
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
    for f in s.figures:
        caption = _caption_of(f)
        parts.append(_figure_html(f, caption))
        parts.append(provenance_html(f, audit.get(f)))
    body = mine[mine["kind"] != "premise"].reset_index(drop=True)
    if len(body):
        counts = body["verdict"].astype(str).str.split(r"[:(]").str[0].str.strip().value_counts()
        summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        view = _with_needed(body)
        view["departures"] = [
            ", ".join(d["setting"] for d in _departures_touching(s, c)) for c in view["claim_id"]
        ]
        parts.append(
            f'<h3 id="claims-{_esc(s.name)}">Claims</h3><p>{_esc(summary)}.</p>'
            + _table_html(
                view,
                cols=_CLAIM_VIEW + ["departures"],
                row_ids=[f"claim-{s.name}-{c}" for c in view["claim_id"]],
            )
        )
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
