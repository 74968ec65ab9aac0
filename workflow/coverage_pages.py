"""The coverage blocks of the study pages: ``python3 workflow/coverage_pages.py --write`` (or
``--check``) rewrites (checks) the generated block of each ``docs/studies/<name>.md`` from its
study's ``paper_items.csv`` and ``coverage.csv`` (:mod:`softmax_ood.analysis.coverage`, which
knows no registry: this tool, like ``workflow/catalog.py``, hands it the registered studies;
the library's core imports no study)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from softmax_ood.analysis.coverage import (  # noqa: E402
    ROOT,
    block_of,
    coverage_markdown,
    coverage_problems,
    coverage_rows,
    doc_page,
    page_with_block,
)


def _studies() -> dict:
    from softmax_ood.studies.registry import registered_studies

    return {n: s for n, s in registered_studies().items() if coverage_rows(s)}


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 workflow/coverage_pages.py",
        description="Rewrite (--write) or check (--check) the coverage block of each study's "
        "page docs/studies/<name>.md from its paper_items.csv and coverage.csv.",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite every page's block")
    mode.add_argument("--check", action="store_true", help="exit 1 if a page's block differs")
    args = parser.parse_args(list(argv) if argv is not None else None)
    stale = []
    for name, study in _studies().items():
        problems = coverage_problems(study)
        if problems:
            print(f"coverage: {problems[0]}", file=sys.stderr)
            return 1
        page = doc_page(name)
        text = page.read_text()
        block = coverage_markdown(study)
        if block_of(text, name) == block:
            continue
        if args.check:
            stale.append(str(page.relative_to(ROOT)))
            continue
        page.write_text(page_with_block(text, name, block))
        print(f"{page.relative_to(ROOT)}: coverage block rewritten")
    if stale:
        print(
            f"coverage: {', '.join(stale)} differ from the declarations; run python3 -m "
            "workflow/coverage_pages.py --write",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
