"""The report HTML in a real browser: Debian's headless Chromium opens each report, every figure
decodes to a non-empty image, no code is on the page, and a full-page screenshot is saved.

Chromium comes from Debian's ``chromium`` package (``workflow/setup.sh`` installs it); no
downloaded browser. The page is opened offline (every host name fails to resolve), as a reader
without network would see it. The check runs in the page: a copy of the HTML gets a small script
that records, after the load event, each ``<img>``'s natural size and the page height on the
``<html>`` element, which ``--dump-dom`` prints.
"""

from __future__ import annotations

import html as htmllib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (workflow/setup.sh installs it: "
    "apt-get install -y chromium)",
)
WIDTH, MAX_HEIGHT = 1280, 16000
PROBE = """<script>
window.addEventListener("load", () => {
  const images = [...document.querySelectorAll("img")].map((img) => ({
    alt: img.alt,
    complete: img.complete,
    natural: [img.naturalWidth, img.naturalHeight],
    shown: [img.getBoundingClientRect().width, img.getBoundingClientRect().height],
  }));
  const code = document.querySelectorAll(
    ".jp-InputArea-editor, .jp-InputPrompt, .jp-OutputPrompt, .highlight"
  ).length;
  const height = document.documentElement.scrollHeight;
  document.documentElement.setAttribute(
    "data-probe", JSON.stringify({ images, code, height })
  );
});
</script>
"""


def _chromium(*args: str, profile: Path) -> subprocess.CompletedProcess:
    cmd = [
        CHROMIUM,
        "--headless",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--hide-scrollbars",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # offline: CDN scripts fail at once
        f"--user-data-dir={profile}",
        "--virtual-time-budget=10000",
        *(["--no-sandbox"] if os.geteuid() == 0 else []),  # Chromium refuses root otherwise
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


#: a proxy on a closed loopback port (the discard port): any request that does leave fails at once
CLOSED_PROXY = "127.0.0.1:9"
_LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome:", "chrome-extension:")


def outside_requests(page: Path, workdir: Path, extra: tuple[str, ...] = ()) -> list[str]:
    """Every URL the page itself asked for beyond the local file system, from Chromium's own
    network log (``--log-net-log``): requests whose network isolation key is the page's
    ``file://`` origin and whose URL is not ``file:``/``data:``/``blob:``. The browser runs
    offline (no DNS, every request through a proxy on a closed loopback port, background
    networking off), so a request is recorded but nothing leaves the machine. The browser's
    own background traffic (update checks, account probes) has another isolation key and is
    not counted: it is not the page's."""
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / f"{page.stem}.netlog.json"
    proc = _chromium(
        f"--proxy-server={CLOSED_PROXY}",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        f"--log-net-log={log}",
        f"--window-size={WIDTH},1000",
        *extra,
        "--dump-dom",
        page.as_uri(),
        profile=workdir / "chromium-profile-net",
    )
    assert "</body>" in proc.stdout, f"chromium did not load {page}:\n{proc.stderr[-3000:]}"
    net = json.loads(log.read_text())
    start = net["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for e in net["events"]:
        p = e.get("params") or {}
        if e["type"] != start or "url" not in p:
            continue
        if not str(p.get("network_isolation_key", "")).startswith("file://"):
            continue  # the browser's own traffic, not the page's
        if not p["url"].startswith(_LOCAL_SCHEMES):
            urls.append(p["url"])
    return sorted(set(urls))


def open_in_chromium(page: Path, workdir: Path) -> tuple[dict, Path]:
    """The probe's record of ``page`` (images, code elements, height) and a full-page
    screenshot ``workdir/<page stem>.png``."""
    workdir.mkdir(parents=True, exist_ok=True)
    probed = workdir / f"{page.stem}.probe.html"
    text = page.read_text()
    assert text.count("</body>") == 1, f"{page} has no single </body>"
    probed.write_text(text.replace("</body>", PROBE + "</body>"))
    profile = workdir / "chromium-profile"
    proc = _chromium(f"--window-size={WIDTH},1000", "--dump-dom", probed.as_uri(), profile=profile)
    found = re.search(r'data-probe="([^"]*)"', proc.stdout)
    assert found, f"chromium gave no probe record for {page}:\n{proc.stderr[-3000:]}"
    record = json.loads(htmllib.unescape(found.group(1)))
    shot = workdir / f"{page.stem}.png"
    height = min(max(int(record["height"]), 600), MAX_HEIGHT)
    proc = _chromium(
        f"--window-size={WIDTH},{height}",
        f"--screenshot={shot}",
        probed.as_uri(),
        profile=profile,
    )
    assert shot.is_file(), f"chromium wrote no screenshot of {page}:\n{proc.stderr[-3000:]}"
    return record, shot


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def _not_blank(path: Path) -> bool:
    import matplotlib.image as mpimg

    pixels = mpimg.imread(path)
    return float(pixels[..., :3].std()) > 0.01


def _figures_in(ipynb: Path) -> int:
    nb = nbformat.read(ipynb, as_version=4)
    return sum(
        "image/png" in o.get("data", {})
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
    )


def _check_page(record: dict, shot: Path, figures: int, where: str) -> None:
    images = record["images"]
    assert len(images) == figures, f"{where}: {len(images)} <img> on the page, {figures} figures"
    for i, img in enumerate(images):
        assert img["complete"] and min(img["natural"]) > 0, f"{where}: image {i} did not render"
        assert min(img["shown"]) > 50, f"{where}: image {i} is laid out at {img['shown']}"
    assert record["code"] == 0, f"{where}: {record['code']} code elements on the page"
    width, height = _png_size(shot)
    assert width == WIDTH and height >= 600, (width, height)
    assert _not_blank(shot), f"{where}: the screenshot is blank"


def _tiny_report(tmp_path: Path, png: bytes | None = None) -> Path:
    """A small report rendered by the shared renderer: one matplotlib figure (or ``png``)."""
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    from softmax_ood.report import render_report

    figure = (
        f"display(Image(data={png!r}, format='png', alt='Figure 1'))"
        if png is not None
        else "import io\nimport matplotlib\nmatplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(3, 2))\n"
        "ax.plot([0, 1, 2], [0, 1, 0])\nbuf = io.BytesIO()\nfig.savefig(buf, format='png')\n"
        "display(Image(data=buf.getvalue(), alt='Figure 1'))"
    )
    nb = new_notebook(
        cells=[
            new_markdown_cell("# Tiny\n\n**Verdict: holds.**"),
            new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
            new_code_cell("from IPython.display import Image, display\n" + figure),
            new_markdown_cell("**Figure 1.** A caption."),
        ]
    )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, tmp_path / "tiny.ipynb")
    render_report(tmp_path / "tiny.ipynb", tmp_path / "tiny.out.ipynb", tmp_path / "tiny.html")
    return tmp_path / "tiny.html"


@needs_chromium
def test_the_browser_check_sees_a_figure_and_a_broken_one(tmp_path):
    (tmp_path / "good").mkdir()
    good = _tiny_report(tmp_path / "good")
    record, shot = open_in_chromium(good, tmp_path / "shots")
    _check_page(record, shot, 1, "tiny report")
    (tmp_path / "bad").mkdir()
    bad = _tiny_report(tmp_path / "bad", png=b"\x89PNG\r\n\x1a\nnot really a png")
    record, _ = open_in_chromium(bad, tmp_path / "shots-bad")
    assert len(record["images"]) == 1 and record["images"][0]["natural"] == [0, 0]


@needs_chromium
def test_every_report_renders_in_chromium(smoke_runs, tmp_path):
    reports = smoke_runs[0] / "reports"
    pages = sorted(p for p in reports.glob("*.html") if p.name != "results.html")  # own test
    assert {p.stem for p in pages} >= {"logitnorm", "seddik"}, pages
    for page in pages:
        record, shot = open_in_chromium(page, tmp_path)
        _check_page(record, shot, _figures_in(page.with_suffix(".ipynb")), page.name)
        print(f"{page.name}: {len(record['images'])} figures, screenshot {shot}", file=sys.stderr)


@needs_chromium
def test_a_report_makes_no_outside_request_and_the_check_sees_one(tmp_path):
    """The shared renderer's page asks the network for nothing (no require.js, MathJax or font
    from a CDN); the control, the same page with one external script and one stylesheet,
    shows exactly those two in the log: the check can fail."""
    page = _tiny_report(tmp_path)
    assert outside_requests(page, tmp_path / "net") == []
    text = page.read_text()
    bad = page.with_name("with_cdn.html")
    bad.write_text(
        text.replace(
            "</head>",
            '<script src="https://cdn.example.org/lib.js"></script>'
            '<link rel="stylesheet" href="http://fonts.example.org/f.css"></head>',
            1,
        )
    )
    assert outside_requests(bad, tmp_path / "net-bad") == [
        "http://fonts.example.org/f.css",
        "https://cdn.example.org/lib.js",
    ]
