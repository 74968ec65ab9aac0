"""The portable report: ``snakemake --report report.zip`` after a finished run, unzipped and
opened in Debian's headless Chromium with no network (the form one attaches to a paper or sends
to a reviewer). The zip holds ``report/report.html`` and every result it links under
``report/data/``; the page renders (its text, a non-blank screenshot) and asks for nothing
beyond its own files. Runs on a copy of the session's smoke run (``smoke_runs``)."""

from __future__ import annotations

import re
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from e2e import SMOKE, snakemake  # noqa: E402
from test_report_browser import (  # noqa: E402
    WIDTH,
    _chromium,
    _not_blank,
    _png_size,
    needs_chromium,
    outside_requests,
)

pytestmark = pytest.mark.slow


@needs_chromium
def test_report_zip_renders_offline(smoke_runs, tmp_path):
    work = tmp_path / "repo"
    shutil.copytree(smoke_runs[0], work, symlinks=True)  # the fixture's files stay untouched
    proc = snakemake(work, "--report", "report.zip", *SMOKE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    unzipped = tmp_path / "unzipped"
    with zipfile.ZipFile(work / "report.zip") as z:
        names = z.namelist()
        z.extractall(unzipped)
    page = unzipped / "report/report.html"
    assert "report/report.html" in names
    data = {n.removeprefix("report/") for n in names if n.startswith("report/data/")}
    linked = set(re.findall(r'"data_uri": "(data/[^"]+)"', page.read_text()))
    assert len(linked) >= 20, sorted(linked)[:5]
    assert linked == data, (sorted(linked - data)[:5], sorted(data - linked)[:5])
    assert any(n.endswith(".png") for n in data) and any(n.endswith(".html") for n in data)

    assert outside_requests(page, tmp_path / "net") == []
    proc = _chromium(
        f"--window-size={WIDTH},1000", "--dump-dom", page.as_uri(), profile=tmp_path / "p"
    )
    rendered = re.sub(r"(?s)<script.*?</script>", "", proc.stdout)  # what the page's code drew
    assert "reproducibility workflow" in rendered, rendered[-2000:]  # workflow/report/workflow.rst
    for category in ("LogitNorm", "Kang", "Results section"):  # the menu of result categories
        assert f">{category}<" in rendered, category
    shot = tmp_path / "report.png"
    _chromium(
        f"--window-size={WIDTH},1000", f"--screenshot={shot}", page.as_uri(), profile=tmp_path / "p"
    )
    assert _png_size(shot) == (WIDTH, 1000) and _not_blank(shot)
