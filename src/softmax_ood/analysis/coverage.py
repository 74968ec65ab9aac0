"""What of each paper runs here, declared as data (issue 45: "every omission declared").

Each paper study keeps two CSV files in its package:

* ``paper_items.csv`` (its ``PAPER_ITEMS``): the paper's results items, read once from the
  paper: ``item`` (``"Table 3"``, ``"Fig 5"``, ``"Theorem 4.1"``), ``section``, ``what``.
* ``coverage.csv`` (read by its ``coverage(config)`` hook): one row per item: ``where`` it runs
  (:data:`PLACES`, ``" + "``-joined when it runs in more than one), ``why`` (one sentence: why
  there, or why nowhere) and ``covered_by``: space-separated claim ids or fnmatch patterns of
  the study's claims, ``table:<name>`` / ``figure:<name>`` of its ``TABLES`` / ``FIGURES``, and
  ``test:<path>`` (a test file of the checkout: a property checked by the test suite).

:func:`coverage_problems` says what a declaration lacks (an item without a row, a row for no
item, an unknown place, an output the study does not make); :func:`claim_problems` checks the
claim ids of each row against the study's ``claim_specs`` in the configs of its places
(:data:`PLACE_CONFIGS`). :func:`coverage_markdown` is the generated block of the study's page
(``docs/studies/<name>.md``); ``python3 workflow/coverage_pages.py --write`` rewrites
every page's block (``--check`` says which differ). Updating a row is one line of the CSV and
``--write``.
"""

from __future__ import annotations

import csv
import fnmatch
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "COVERAGE_COLUMNS",
    "ITEM_COLUMNS",
    "NOT_RUN",
    "PLACES",
    "PLACE_CONFIGS",
    "begin_marker",
    "claim_problems",
    "coverage_markdown",
    "coverage_problems",
    "coverage_rows",
    "covered_by",
    "end_marker",
    "page_with_block",
    "read_coverage",
    "read_items",
    "summary",
]

ROOT = Path(__file__).resolve().parents[3]
ITEM_COLUMNS = ["item", "section", "what"]
COVERAGE_COLUMNS = ["item", "where", "why", "covered_by"]

#: where an item runs: place -> what it means for a reader
PLACES: dict[str, str] = {
    "default": "the 28x28 default (config/default.yaml)",
    "digits": "the 8x8 digits overlay (config/digits.yaml)",
    "full": "the full configuration (config/full.yaml)",
    "paper scale": "a paper-scale config (config/paper*.yaml: the real data, a GPU-class machine)",
    "unit test": "a property with no data, checked by the test suite",
    "not yet run": "planned; no claim or output makes it yet",
    "not run": "made nowhere here",
    "not possible offline": "needs data this checkout cannot reach offline",
}
#: the places that run nothing (a row there names nothing in ``covered_by``)
NOT_RUN = ("not yet run", "not run", "not possible offline")
#: the config overlays (on config/default.yaml) of each place that runs claims; a row's claim
#: ids must be claims of the study in at least one of its places' configs
PLACE_CONFIGS: dict[str, tuple[tuple[str, ...], ...]] = {
    "default": ((),),
    "digits": (("digits.yaml",),),
    "full": (("full.yaml",),),
    "paper scale": (
        ("paper.yaml",),
        ("paper.yaml", "paper_cifar100.yaml"),
        ("paper.yaml", "paper_kang_mnist.yaml"),
    ),
}


def _read(path: str | Path, columns: Sequence[str]) -> list[dict]:
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if list(reader.fieldnames or []) != list(columns):
            raise ValueError(
                f"{path} has the columns {', '.join(reader.fieldnames or [])}; expected "
                f"{', '.join(columns)}"
            )
        return [{k: (v or "").strip() for k, v in row.items()} for row in reader]


def read_items(path: str | Path) -> list[dict]:
    """A paper's results items (``paper_items.csv``): rows of :data:`ITEM_COLUMNS`."""
    return _read(path, ITEM_COLUMNS)


def read_coverage(path: str | Path) -> list[dict]:
    """A study's coverage declaration (``coverage.csv``): rows of :data:`COVERAGE_COLUMNS`."""
    return _read(path, COVERAGE_COLUMNS)


def places(row: Mapping) -> list[str]:
    return [p.strip() for p in str(row["where"]).split("+") if p.strip()]


def covered_by(row: Mapping) -> dict[str, list[str]]:
    """A row's ``covered_by`` split: ``claims`` (ids or patterns), ``table``, ``figure``,
    ``test``."""
    out: dict[str, list[str]] = {"claims": [], "table": [], "figure": [], "test": []}
    for token in str(row.get("covered_by") or "").split():
        kind, sep, name = token.partition(":")
        if sep and kind in ("table", "figure", "test"):
            out[kind].append(name)
        else:
            out["claims"].append(token)
    return out


def coverage_rows(study, config: dict | None = None) -> list[dict]:
    """The study's coverage rows (its ``coverage(config)`` hook), each with the item's
    ``section`` and ``what`` from its ``PAPER_ITEMS``; [] for a study without the hooks."""
    if not callable(getattr(study, "coverage", None)) or not hasattr(study, "PAPER_ITEMS"):
        return []
    items = {r["item"]: r for r in read_items(study.PAPER_ITEMS)}
    out = []
    for row in study.coverage(config or {}):
        item = items.get(row["item"], {})
        out.append({**row, "section": item.get("section", ""), "what": item.get("what", "")})
    return out


def coverage_problems(study, root: str | Path = ROOT) -> list[str]:
    """What the study's declaration lacks (empty when complete): a paper item without a row, a
    row for no item or a second row for one, an unknown or mixed place, no why, nothing named
    for a place that runs, something named for a place that runs nothing, a table or figure
    not among its ``TABLES`` / ``FIGURES``, a test file that does not exist."""
    name = getattr(study, "NAME", "study")
    has = [hasattr(study, "PAPER_ITEMS"), callable(getattr(study, "coverage", None))]
    if not any(has):
        return []
    if not all(has):
        return [f"{name} declares coverage only in part: it needs PAPER_ITEMS and coverage(config)"]
    try:
        items = [r["item"] for r in read_items(study.PAPER_ITEMS)]
        rows = list(study.coverage({}))
    except (OSError, ValueError, KeyError) as e:
        return [f"{name}'s coverage cannot be read: {e}"]
    problems = [
        f"{name}'s paper item {i!r} has no coverage row"
        for i in items
        if i not in {r["item"] for r in rows}
    ]
    seen: set[str] = set()
    for row in rows:
        item = row["item"]
        where = f"{name}'s coverage row {item!r}"
        if item not in items:
            problems.append(f"{where} names no item of its PAPER_ITEMS")
        if item in seen:
            problems.append(f"{where} appears twice")
        seen.add(item)
        ps = places(row)
        unknown = [p for p in ps if p not in PLACES]
        if not ps or unknown:
            problems.append(
                f"{where} runs in {row['where']!r}; each place is one of {', '.join(PLACES)}"
            )
            continue
        if ps != sorted(ps, key=list(PLACES).index):
            problems.append(f"{where} lists its places out of order ({', '.join(PLACES)})")
        if not row.get("why"):
            problems.append(f"{where} says no why")
        named = covered_by(row)
        idle = [p for p in ps if p in NOT_RUN]
        if idle and len(ps) > 1:
            problems.append(f"{where} mixes {idle[0]!r} with other places")
        if idle and any(named.values()):
            problems.append(f"{where} is {idle[0]!r} but names what covers it")
        if not idle and not any(named.values()):
            problems.append(f"{where} runs in {row['where']!r} but names no claim or output")
        for kind, known in (("table", study.TABLES), ("figure", study.FIGURES)):
            problems += [
                f"{where} names {kind} {n!r}, which {name} does not make"
                for n in named[kind]
                if n not in known
            ]
        problems += [
            f"{where} names test {t!r}, which does not exist"
            for t in named["test"]
            if not (Path(root) / t).is_file()
        ]
    return problems


def claim_problems(study, configs: Mapping[str, Sequence[dict]]) -> list[str]:
    """Each claim id or pattern a row names must match a claim of the study's
    ``claim_specs`` in the config of one of its places (``configs``: place -> the validated
    configs of that place, :data:`PLACE_CONFIGS`); a place that runs claims and has no config
    (``full`` before ``config/full.yaml`` exists) is a problem."""
    name = getattr(study, "NAME", "study")
    problems = []
    ids_of: dict[str, list[set[str]]] = {}
    for row in study.coverage({}):
        claims = covered_by(row)["claims"]
        if not claims:
            continue
        where = [p for p in places(row) if p in PLACE_CONFIGS]
        missing = [p for p in where if not configs.get(p)]
        if missing:
            problems.append(
                f"{name}'s coverage row {row['item']!r} runs in {missing[0]!r}, which has no "
                "config here"
            )
            continue
        pool = []
        for p in where:
            if p not in ids_of:
                ids_of[p] = [{s.id for s in study.claim_specs(c)} for c in configs[p]]
            pool += ids_of[p]
        for pattern in claims:
            if not any(fnmatch.filter(ids, pattern) for ids in pool):
                problems.append(
                    f"{name}'s coverage row {row['item']!r} names {pattern!r}, which matches no "
                    f"claim of {name} in {' + '.join(where) or 'no place that runs claims'}"
                )
    return problems


_COUNTED = {
    "default": "in the default",
    "digits": "in the digits overlay, not the default",
    "full": "in the full config, not the default",
    "paper scale": "only at paper scale",
    "unit test": "checked by unit tests",
    "not yet run": "not yet run",
    "not run": "not run anywhere",
    "not possible offline": "not possible offline",
}


def summary(rows: Sequence[Mapping]) -> str:
    """One sentence counting the items by where they run: "18 items: 6 in the default, ...".
    An item running in several places counts at the first listed."""
    counts: dict[str, int] = {}
    for r in rows:
        first = places(r)[0] if places(r) else "?"
        counts[first] = counts.get(first, 0) + 1
    parts = [f"{counts[p]} {_COUNTED[p]}" for p in PLACES if counts.get(p)]
    return f"{len(rows)} items of the paper's results: " + ", ".join(parts) + "."


def begin_marker(name: str) -> str:
    return (
        f"<!-- coverage:{name} (generated from the study's paper_items.csv and coverage.csv: "
        "python3 workflow/coverage_pages.py --write) -->"
    )


def end_marker(name: str) -> str:
    return f"<!-- /coverage:{name} -->"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def coverage_markdown(study) -> str:
    """The generated block of the study's page: a count by place and the table (item, where
    it runs, why, what covers it), between :func:`begin_marker` and :func:`end_marker`."""
    rows = coverage_rows(study)
    lines = [begin_marker(study.NAME), "", summary(rows), ""]
    lines += ["| item | what | where it runs | why | covered by |", "|---|---|---|---|---|"]
    for r in rows:
        what = f"{r['what']} ({r['section']})" if r["section"] else r["what"]
        cover = " ".join(f"`{t}`" for t in str(r["covered_by"]).split()) or "-"
        lines.append(
            f"| {_cell(r['item'])} | {_cell(what)} | {_cell(r['where'])} | {_cell(r['why'])} "
            f"| {_cell(cover)} |"
        )
    lines += ["", end_marker(study.NAME)]
    return "\n".join(lines)


_HEADING = "## What of the paper runs here"


def page_with_block(page: str, name: str, block: str) -> str:
    """``page`` with its coverage block replaced by ``block``; a page without one gets it at
    its end under :data:`_HEADING`. Raises ValueError on a page with more than one."""
    begin, end = begin_marker(name).split(" (")[0], end_marker(name)
    n_begin, n_end = page.count(begin), page.count(end)
    if n_begin == 0 and n_end == 0:
        return page.rstrip("\n") + f"\n\n{_HEADING}\n\n{block}\n"
    if n_begin != 1 or n_end != 1:
        raise ValueError(f"the page of {name} needs exactly one {begin} ... {end} block")
    i = page.index(begin)
    j = page.index(end) + len(end)
    return page[:i] + block + page[j:]


def block_of(page: str, name: str) -> str | None:
    """The page's coverage block of study ``name`` (markers included), or None."""
    begin, end = begin_marker(name).split(" (")[0], end_marker(name)
    if page.count(begin) != 1 or page.count(end) != 1:
        return None
    return page[page.index(begin) : page.index(end) + len(end)]


def doc_page(name: str, root: str | Path = ROOT) -> Path:
    return Path(root) / "docs" / "studies" / f"{name}.md"
