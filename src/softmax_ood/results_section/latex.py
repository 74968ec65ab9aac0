"""The LaTeX section: every table as a booktabs fragment (:func:`table_latex`,
:func:`study_table_latex`), every figure as a PDF page (:func:`figure_pdf`), and
``results/results_section.tex`` (:func:`section_tex`), headline table first; compiles with a
plain TeX installation (pdflatex, booktabs, longtable, graphicx)."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .headline import (
    _CLAIM_VIEW,
    HEADLINE_COLUMNS,
    _departures_shown,
    _departures_touching,
    _headline_view,
    _short_title,
    _with_needed,
    headline_frame,
    headline_paragraph,
    side_by_side_cells,
)
from .outputs import _NO_PRINTED, StudyOutputs, _caption_of, _display_columns


def latex_path(path: str) -> str:
    """``results/<study>/<ds>/{tables,figures}/<x>.{parquet,png}`` -> ``.../latex/<x>.{tex,pdf}``."""
    p = Path(path)
    ext = ".tex" if p.suffix == ".parquet" else ".pdf"
    return str(p.parent.parent / "latex" / (p.stem + ext))


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

    from ..analysis.style import DPI
    from ..provenance import write_bytes_atomic

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
