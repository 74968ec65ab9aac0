"""The results section as a reader meets it (issue 19), on the smoke runs: one page and one
LaTeX document across every study, byte-identical between two builds; headless Chromium opens the
page offline, every figure renders, every provenance link resolves, the claims table sorts, and a
screenshot is saved; the ``.tex`` compiles with pdflatex where TeX is installed."""

from __future__ import annotations

import html as htmllib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from softmax_ood.analysis.claims import KINDS
from softmax_ood.studies.registry import STUDIES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_report_browser import (  # noqa: E402
    CHROMIUM,
    WIDTH,
    _chromium,
    _not_blank,
    outside_requests,
)

pytestmark = pytest.mark.slow
#: the height of the first screen at WIDTH (a 1280 x 800 window)
FIRST_SCREEN = 800

PROBE = """<script>
window.addEventListener("load", () => {
  const table = document.querySelector("table.sortable");
  const cols = Array.from(table.tHead.rows[0].cells).map((c) => c.getAttribute("data-col"));
  const p = cols.indexOf("p_value");
  const images = [...document.querySelectorAll("img")].map((img) => [img.naturalWidth, img.naturalHeight, img.getBoundingClientRect().width]);
  const ps = Array.from(table.tBodies[0].rows).map((r) => r.cells[p].textContent.trim());
  const links = [...document.querySelectorAll("a.rs-prov-link")].map((a) => a.getAttribute("href"));
  // where each headline row starts and ends on the page (before any sorting scrolls)
  const headline = [...document.querySelectorAll("table.rs-headline tbody tr")].map((r) => {
    const b = r.getBoundingClientRect();
    return [b.top + window.scrollY, b.bottom + window.scrollY];
  });
  document.documentElement.setAttribute("data-probe", JSON.stringify({
    images, ps, links, headline, sorted: table.getAttribute("data-sorted"),
    height: document.documentElement.scrollHeight,
  }));
});
</script>"""


def _outputs(run: Path) -> list[Path]:
    files = [run / "reports/results.html", run / "reports/results.ipynb"]
    files += [run / "results/claims_all.parquet", run / "results/claims_all.csv"]
    files += [run / "results/results_section.tex", run / "results/audit.json"]
    files += sorted(run.glob("results/**/latex/*"))
    return files


def test_the_page_and_the_tex_are_byte_identical_across_two_builds(smoke_runs):
    """The page, the section and their tables against the golden manifest's build (an earlier
    run from scratch): every one of them is in it, with the same digest."""
    from softmax_ood import golden

    a = smoke_runs[0]
    files = [f.relative_to(a).as_posix() for f in _outputs(a)]
    assert len(files) > 10
    want = golden.load()["files"]
    missing = [f for f in files if f not in want]
    assert not missing, f"not in the golden manifest: {missing}"
    different = [f for f in files if golden.digest(a / f) != want[f]]
    assert not different, f"differ from the golden build: {different}"


def test_one_claims_table_covers_every_study_with_p_power_and_n(smoke_runs):
    run = smoke_runs[0]
    claims = pd.read_parquet(run / "results/claims_all.parquet")
    assert set(claims["study"]) == set(STUDIES)
    assert list(dict.fromkeys(claims["study"])) == [s for s in STUDIES if s in set(claims["study"])]
    assert set(claims["kind"]) <= set(KINDS) and "premise" in set(claims["kind"])
    for col in ("p_value", "power", "n", "verdict"):
        assert col in claims
    csv = pd.read_csv(run / "results/claims_all.csv")
    assert len(csv) == len(claims)
    audit = json.loads((run / "results/audit.json").read_text())
    assert audit and all(r["ok"] for r in audit.values()), [
        k for k, r in audit.items() if not r["ok"]
    ]


@pytest.mark.skipif(
    shutil.which("pdflatex") is None,
    reason="no pdflatex (workflow/setup.sh installs Debian's texlive)",
)
def test_the_results_section_compiles_with_pdflatex(smoke_runs, tmp_path):
    src = smoke_runs[0] / "results"
    work = tmp_path / "results"
    shutil.copytree(src, work, ignore=shutil.ignore_patterns("*.pt", "*.npy"))
    for _ in range(2):  # longtable needs two passes for its widths
        proc = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "results_section.tex"],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stdout[-3000:]
    assert (work / "results_section.pdf").stat().st_size > 10_000
    log = (work / "results_section.log").read_text(errors="replace")
    # every table fits the text width, and no table runs off the foot of its page
    overfull = re.findall(r"Overfull \\[hv]box.*", log)
    assert not overfull, overfull
    # every character the studies print is typeset, none written as [U+XXXX]
    assert not [p.name for p in work.rglob("*.tex") if "[U+" in p.read_text()]
    tex = (work / "results_section.tex").read_text()
    assert tex.index("Headline claims") < tex.index(r"\section{")  # the headline table first


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_the_page_in_chromium_figures_links_and_sorting(smoke_runs, tmp_path):
    run = smoke_runs[0]
    page = run / "reports/results.html"
    text = page.read_text()
    assert text.count("</body>") == 1
    probed = page.with_name("results.probe.html")  # beside it, so relative links resolve
    probed.write_text(text.replace("</body>", PROBE + "</body>"))
    try:
        proc = _chromium(
            f"--window-size={WIDTH},1000",
            "--dump-dom",
            probed.as_uri() + "#sort=p_value",
            profile=tmp_path / "profile",
        )
        found = re.search(r'data-probe="([^"]*)"', proc.stdout)
        assert found, proc.stderr[-3000:]
        rec = json.loads(htmllib.unescape(found.group(1)))
        shot = tmp_path / "results.png"
        height = min(max(int(rec["height"]), 600), 16000)
        _chromium(
            f"--window-size={WIDTH},{height}",
            f"--screenshot={shot}",
            probed.as_uri(),
            profile=tmp_path / "profile",
        )
    finally:
        probed.unlink()
    figures = [f for s in json.loads(_param(run, "studies_json")) for f in s["figures"]]
    assert len(rec["images"]) == len(figures) > 0
    for w, h, shown in rec["images"]:
        assert w > 0 and h > 0 and shown > 50
    assert rec["links"], "no provenance link on the page"
    for href in rec["links"]:
        assert (page.parent / href).resolve().is_file(), f"provenance link {href} does not resolve"
    assert rec["sorted"] == f"{_col(text, 'p_value')}:1"
    ps = [float(x) for x in rec["ps"] if x != "n/a"]
    assert ps == sorted(ps) and all(x == "n/a" for x in rec["ps"][len(ps) :])
    assert shot.is_file() and _not_blank(shot)
    # the first screen (1280 x 800) answers "which headline claims reproduce, in which regime":
    # every headline row (claim, paper's number, ours, verdict, regime) lies on it
    assert rec["headline"], "no headline row on the page"
    assert max(bottom for _, bottom in rec["headline"]) <= FIRST_SCREEN, rec["headline"]
    print(f"results page: {len(figures)} figures, screenshot {shot}", file=sys.stderr)


def _param(run: Path, name: str) -> str:
    import nbformat

    nb = nbformat.read(run / "reports/results.ipynb", as_version=4)
    return nb.metadata["papermill"]["parameters"][name]


def _col(text: str, name: str) -> int:
    table = text[text.index('class="rs sortable"') :]
    head = table[: table.index("</thead>")]
    return re.findall(r'data-col="([^"]+)"', head).index(name)


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_no_page_asks_the_network_for_anything(smoke_runs, tmp_path):
    """The results page and every study's report (the same shared renderer) open with zero
    requests beyond the local files (Chromium's net log; see outside_requests)."""
    pages = sorted((smoke_runs[0] / "reports").glob("*.html"))
    assert {p.stem for p in pages} >= {"results", "logitnorm", "seddik"}, pages
    for page in pages:
        assert outside_requests(page, tmp_path / page.stem) == [], page.name


def test_the_page_opens_with_the_headline_claims(smoke_runs):
    text = (smoke_runs[0] / "reports/results.html").read_text()
    head = text.index('<h2 id="headline">')
    first = min(text.index(f'<h2 id="{s}">') for s in STUDIES if f'<h2 id="{s}">' in text)
    assert head < first
    table = text[head:first]
    for s in STUDIES:  # every paper has a row, and each row links down to its details
        assert f'href="#claim-{s}-' in table or f'href="#{s}"' in table, s
    for href in re.findall(r'href="#(claim-[^"]+)"', table):
        assert f'id="{href}"' in text, href
