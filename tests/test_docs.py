"""The README stays a five-minute read and the documentation's links resolve.

The README (at most :data:`README_MAX_LINES` lines) opens with the two commands `.ci/run` and the
guide rely on; everything else lives under ``docs/``. Every relative link in the README and in
``docs/**/*.md`` must point at a file of the checkout, and an anchor at one of its headings
(external links are not followed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 200
FIRST_COMMANDS = (
    "bash workflow/setup.sh && snakemake --cores all",
    "python3 -m pytest -q",
)
# [text](target) and [text](target "title"); images too (the "!" is outside the match)
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"(?ms)^```.*?^```")


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def anchors(text: str) -> set[str]:
    """GitHub's anchors of a markdown text's headings (lower case, punctuation dropped, spaces
    to hyphens)."""
    heads = re.findall(r"(?m)^#{1,6}\s+(.+?)\s*$", _FENCE.sub("", text))
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in heads}


def broken_links(path: Path, text: str | None = None) -> list[str]:
    """The relative link targets in ``path``'s markdown (or ``text``, read as if at ``path``)
    that name no existing file or folder, or a heading anchor the markdown file it names does
    not have; links inside code fences are not links."""
    text = path.read_text() if text is None else text
    out = []
    for target in _LINK.findall(_FENCE.sub("", text)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # http(s):, mailto: ...
        file, _, anchor = target.partition("#")
        if not file:  # an anchor in the same page
            if anchor not in anchors(text):
                out.append(target)
            continue
        dest = path.parent / file
        if not dest.exists():
            out.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
            out.append(target)
    return out


def test_readme_fits_the_limit():
    n = len((ROOT / "README.md").read_text().splitlines())
    assert n <= README_MAX_LINES, (
        f"README.md has {n} lines (limit {README_MAX_LINES}): move detail to a page under docs/"
    )


def test_readme_opens_with_the_two_commands():
    """The first code block's first two lines are the run and the test command, in that order."""
    block = _FENCE.search((ROOT / "README.md").read_text()).group(0).splitlines()[1:3]
    assert [line.split("#", 1)[0].strip() for line in block] == list(FIRST_COMMANDS)


def test_every_relative_link_resolves():
    files = markdown_files()
    assert (ROOT / "docs/index.md") in files and len(files) > 2
    bad = {str(p.relative_to(ROOT)): b for p in files if (b := broken_links(p))}
    assert not bad, f"links to missing files: {bad}"


def test_docs_are_linked_from_the_readme_or_the_map():
    """No orphan page: each docs page is reachable from the README or docs/index.md."""
    linked = set()
    for p in (ROOT / "README.md", ROOT / "docs/index.md"):
        text = _FENCE.sub("", p.read_text())
        linked |= {(p.parent / t.split("#", 1)[0]).resolve() for t in _LINK.findall(text)}
    orphans = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "docs").rglob("*.md"))
        if p.resolve() not in linked and p.name != "index.md"
    ]
    assert not orphans, f"docs pages linked from neither README.md nor docs/index.md: {orphans}"


def test_the_link_check_can_fail(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# Title\n\n## DVC: shared models\n")
    text = (
        "## Here\n[ok](there.md) [ok](there.md#dvc-shared-models) [web](https://example.org)\n"
        "[anchor](#here) [gone](missing.md) [gone too](sub/none.md#x)\n"
        "[no such heading](there.md#nowhere) [nor here](#elsewhere)\n"
        "```\n[in a fence](not-a-link.md)\n```\n"
    )
    assert broken_links(page, text) == [
        "missing.md",
        "sub/none.md#x",
        "there.md#nowhere",
        "#elsewhere",
    ]


def test_the_readme_lists_every_registered_study_with_its_page():
    """A study added to the registry is on the README's study table, linked to its page."""
    from softmax_ood.studies.registry import registered_studies

    readme = (ROOT / "README.md").read_text()
    for name in registered_studies():
        row = f"| [`{name}`](docs/studies/{name}.md) |"
        assert row in readme, f"README.md's study table has no row {row!r}"
        assert (ROOT / f"docs/studies/{name}.md").is_file(), f"docs/studies/{name}.md is missing"


def test_each_study_page_carries_its_generated_coverage_block():
    """Issue 45: each paper study's page shows where every item of its paper runs, generated
    from its paper_items.csv and coverage.csv (regenerate with ``python3 -m
    workflow/coverage_pages.py --write``), never edited by hand."""
    from softmax_ood.analysis.coverage import block_of, coverage_markdown, coverage_rows
    from softmax_ood.studies.registry import registered_studies

    covered = [s for s in registered_studies().values() if coverage_rows(s)]
    assert {s.NAME for s in covered} >= {"logitnorm", "kang", "ulmer", "seddik"}
    for study in covered:
        page = ROOT / f"docs/studies/{study.NAME}.md"
        block = block_of(page.read_text(), study.NAME)
        assert block == coverage_markdown(study), (
            f"{page.relative_to(ROOT)}'s coverage block differs from the study's declaration: "
            "run python3 workflow/coverage_pages.py --write"
        )


def test_the_coverage_block_check_can_fail():
    """Another declaration renders another block, and rewriting a page puts exactly that block
    between the markers (a page without one gets it at its end)."""
    from softmax_ood.analysis.coverage import block_of, coverage_markdown, page_with_block
    from softmax_ood.studies.registry import load_study

    study = load_study("seddik")
    block = coverage_markdown(study)
    page = (ROOT / "docs/studies/seddik.md").read_text()
    other = block.replace("| Fig 2 |", "| Fig 2b |")
    assert other != block and block_of(page_with_block(page, "seddik", other), "seddik") == other
    fresh = page_with_block("# A page\n", "seddik", block)
    assert fresh.startswith("# A page\n\n## What of the paper runs here\n\n")
    assert block_of(fresh, "seddik") == block
    with pytest.raises(ValueError, match="exactly one"):
        page_with_block(fresh + block, "seddik", block)
