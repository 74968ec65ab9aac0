"""The shared report renderer: papermill + nbconvert, deterministic bytes, no code in the HTML."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from softmax_ood.report import ReportError, normalise, render_report

ROOT = Path(__file__).resolve().parents[1]
SECRET = "CODE_ONLY_MARKER_42"  # appears in code, never in an output


def _notebook(path: Path, *extra_cells) -> Path:
    cells = [
        new_markdown_cell("# Tiny report\n\nThe verdict comes first."),
        new_code_cell(
            f'label = "default"  # {SECRET}\nscale = 1', metadata={"tags": ["parameters"]}
        ),
        new_code_cell(
            "import io, base64\n"
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "from IPython.display import Image, Markdown, display\n"
            f"# {SECRET}\n"
            "print(f'Verdict: {label.upper()} x{scale}')\n"
            "display(Markdown('| a | b |\\n|---|---|\\n| 1 | 2 |'))"
        ),
        new_code_cell(
            "fig, ax = plt.subplots(figsize=(2, 2))\n"
            "ax.plot([0, 1], [0, 1])\n"
            "buf = io.BytesIO()\n"
            "fig.savefig(buf, format='png', metadata={'Software': None})\n"
            "plt.close(fig)\n"
            "display(Image(data=buf.getvalue(), alt='A line.'))"
        ),
        new_markdown_cell("Figure 1. A line."),
        new_code_cell("1 + 1"),  # an execute_result (carries an execution count)
        new_code_cell("print('HIDDEN_CELL')", metadata={"tags": ["remove-cell"]}),
        new_code_cell("print('HIDDEN_OUTPUT')", metadata={"tags": ["remove-output"]}),
        *extra_cells,
    ]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    nbformat.write(nb, path)
    return path


def _render(tmp_path: Path, name: str, notebook: Path, **params):
    out = tmp_path / name
    out.mkdir()
    render_report(notebook, out / "r.ipynb", out / "r.html", params, cwd=tmp_path)
    return out / "r.ipynb", out / "r.html"


@pytest.mark.slow  # executes a notebook (the fast loop stays under 2 min)
def test_two_renders_are_byte_identical_and_the_html_has_no_code(tmp_path):
    nb = _notebook(tmp_path / "report.ipynb")
    a = _render(tmp_path, "a", nb, label="holds", scale=2)
    b = _render(tmp_path, "b", nb, label="holds", scale=2)
    for x, y in zip(a, b, strict=True):
        assert x.read_bytes() == y.read_bytes(), x.name
    html = a[1].read_text()
    assert "Verdict: HOLDS x2" in html  # the outputs stay
    assert "Figure 1. A line." in html  # the markdown stays
    assert html.count("<img ") == html.count('<img alt="A line." ') == 1  # caption as alt text
    assert 'src="data:image/png;base64,' in html  # embedded
    assert SECRET not in html and "plt.subplots" not in html  # no input cell at all
    body = html.split("<body", 1)[1]  # (the stylesheet names every class)
    assert "jp-CodeMirrorEditor" not in body and "highlight hl-python" not in body  # no code
    assert "jp-InputPrompt" not in body and "jp-OutputPrompt" not in body  # no prompts
    assert "In&nbsp;[" not in body and "Out[" not in body
    assert "<title>Tiny report</title>" in html
    executed = json.loads(a[0].read_text())
    text = a[0].read_text()
    assert "start_time" not in text and "duration" not in text and "end_time" not in text
    assert executed["metadata"]["papermill"] == {"parameters": {"label": "holds", "scale": 2}}
    assert executed["metadata"]["language_info"] == {"name": "python"}
    injected = [
        c for c in executed["cells"] if "injected-parameters" in c["metadata"].get("tags", [])
    ]
    assert [c["id"] for c in injected] == ["injected-parameters"]
    counts = [c["execution_count"] for c in executed["cells"] if c["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1))
    assert all("execution" not in c["metadata"] for c in executed["cells"])
    # Jupyter Book tags: left out of the HTML, kept in the executed notebook
    assert "HIDDEN_CELL" not in html and "HIDDEN_OUTPUT" not in html
    assert "HIDDEN_CELL" in text and "HIDDEN_OUTPUT" in text
    # normalising again changes nothing
    once = nbformat.read(a[0], as_version=4)
    assert nbformat.writes(normalise(once)) == nbformat.writes(once)


@pytest.mark.slow
def test_a_failing_cell_leaves_nothing_and_names_the_cell(tmp_path):
    nb = _notebook(tmp_path / "report.ipynb", new_code_cell("raise KeyError('no such table')"))
    out = tmp_path / "out"
    out.mkdir()
    (out / "r.html").write_text("old")  # a previous report stays as it was
    with pytest.raises(ReportError, match="KeyError") as err:
        render_report(nb, out / "r.ipynb", out / "r.html", {}, cwd=tmp_path)
    assert "no such table" in str(err.value)
    assert sorted(p.name for p in out.iterdir()) == ["r.html"]
    assert (out / "r.html").read_text() == "old"


def test_an_output_with_a_memory_address_is_refused(tmp_path):
    nb = _notebook(tmp_path / "report.ipynb", new_code_cell("object()"))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ReportError, match="memory address"):
        render_report(nb, out / "r.ipynb", out / "r.html", {}, cwd=tmp_path)
    assert list(out.iterdir()) == []


@pytest.mark.slow  # executes a notebook (the fast loop stays under 2 min)
def test_the_script_runs_outside_snakemake(tmp_path):
    nb = _notebook(tmp_path / "report.ipynb")
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "workflow/scripts/render_report.py"),
            str(nb),
            str(tmp_path / "r.ipynb"),
            str(tmp_path / "r.html"),
            "-p",
            "label",
            "cli",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Verdict: CLI x1" in (tmp_path / "r.html").read_text()
