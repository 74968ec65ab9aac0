"""What the results section reads of each study (:class:`StudyOutputs`, from its registered
targets), the one claims table across the studies (:func:`collect_claims`), the departures, and
the cell formatting every output of the section shares."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..analysis.claims import COLUMNS, NOT_REPLICATED
from ..analysis.coverage import coverage_rows

#: the stacked claims table's columns: every study's claims-table columns
#: (:data:`softmax_ood.analysis.claims.COLUMNS`, one registry), the study's name after the paper
CLAIM_COLUMNS = ["paper", "study", *(c for c in COLUMNS if c != "paper")]


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


def _caption_of(path: str) -> str:
    p = Path(path)
    parts = p.parts
    where = "/".join(parts[1:-2]) if len(parts) > 3 else ""
    return f"{where}: {p.stem}" if where else p.stem


#: said over a table the study records no printed value of the paper for (no row of its
#: ``PAPER_VALUES`` names it), so a reader does not hunt for the paper's number
_NO_PRINTED = (
    "Ours only: the study records no printed value of the paper for this table (its paper "
    "values name no row of it), so there is nothing to set beside ours."
)
