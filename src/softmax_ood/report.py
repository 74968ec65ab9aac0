"""Every study's report: execute its notebook with papermill, make the result deterministic,
render HTML without code.

:func:`render_report` is what each study's report rule runs (through
``workflow/scripts/render_report.py``, or ``python3 -m softmax_ood.report`` by hand):

1. **Execute** the notebook with papermill on the ``python3`` kernel, parameters injected, the
   working directory ``cwd``; the kernel imports *this* checkout's ``softmax_ood`` (its ``src/``
   is put first on the kernel's ``PYTHONPATH``) and runs with ``PYTHONHASHSEED=0``.
2. **Normalise** the executed notebook (:func:`normalise`): papermill's per-cell and notebook
   metadata (timestamps, durations, status, environment) go, except the parameters; nbclient's
   execution timestamps go; execution counts are renumbered 1, 2, ... over the code cells; the
   injected parameters cell (a random id) gets the id ``injected-parameters``; the language
   info keeps only the language name (no interpreter version). An output that shows an object's
   memory address (``<... at 0x7f...>``, different on every run) is an error naming the cell.
3. **Render** HTML with nbconvert's ``lab`` template and no code, self-contained: no script,
   style, font or image is fetched from the network (the template's CDN scripts -- require.js,
   MathJax, mermaid -- are left out; styles are inlined, figures are ``data:`` URIs). Every
   input cell and every prompt is hidden (a code cell without output leaves no trace), the outputs and the markdown
   stay; an image's ``alt`` metadata (``Image(..., alt=...)``) becomes its alternative text.
   Cells tagged ``remove-cell`` are left out of the HTML, cells tagged ``remove-output`` keep
   no output (the Jupyter Book tags). The page title is the notebook's first ``# `` heading.
4. **Write** both files atomically (temporary file + rename) only after both were made: a
   failing cell leaves no new ``.ipynb`` or ``.html`` behind.

The same inputs give the same bytes: nothing in either file depends on the time, the host,
the working directory's absolute path or the output file names. A value that really differs
between runs (a wall time) does not belong in a report; write it beside it (Seddik's timing).

Every study's report is made by the shared rule ``<study>_report`` (``rules/study.smk``) through
``workflow/scripts/render_report.py``: the study's ``report_job(config)`` lists what its notebook
reads and the notebook's parameters.
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

__all__ = [
    "KERNEL",
    "ReportError",
    "execute",
    "main",
    "normalise",
    "render_report",
    "to_html",
]

KERNEL = "python3"
SRC = Path(__file__).resolve().parents[1]  # this checkout's src/ (the kernel imports from it)
INJECTED_ID = "injected-parameters"
#: cell metadata written by papermill, nbclient or the Jupyter UI that changes between runs
VOLATILE_CELL_METADATA = ("papermill", "execution", "ExecuteTime", "collapsed", "scrolled")
#: ``<matplotlib.figure.Figure at 0x7f3a...>``, ``<object object at 0x...>``: a new address each run
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]{6,}")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class ReportError(RuntimeError):
    """The notebook failed or produced output that cannot be reproduced; the message says
    which cell and why."""


@contextlib.contextmanager
def _kernel_environment() -> Iterator[None]:
    """The kernel (a child process) inherits ``os.environ``: this checkout's ``src/`` first on
    ``PYTHONPATH``, a fixed hash seed. Restored afterwards."""
    saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "PYTHONHASHSEED")}
    paths = [str(SRC)] + [p for p in (saved["PYTHONPATH"] or "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    os.environ["PYTHONHASHSEED"] = "0"
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _cell_label(nb, index: int) -> str:
    cell = nb.cells[index]
    first = next((ln.strip() for ln in cell.source.splitlines() if ln.strip()), "")
    return f"cell {index + 1} (id {cell.get('id', '?')}, starting {first[:60]!r})"


def execute(
    notebook: str | Path,
    parameters: Mapping[str, object] | None = None,
    cwd: str | Path = ".",
    kernel: str = KERNEL,
    start_timeout: int = 120,
):
    """The notebook at ``notebook`` executed by papermill (nothing written); raises
    :class:`ReportError` naming the failing cell."""
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    nb = nbformat.read(str(notebook), as_version=4)
    if not any("parameters" in c.metadata.get("tags", []) for c in nb.cells):
        raise ReportError(
            f"{notebook} has no cell tagged 'parameters'; papermill needs one to inject "
            "the report's inputs."
        )
    # plain str for Snakemake's file objects and paths: papermill injects them as literals
    params = {
        k: str(v) if isinstance(v, str | os.PathLike) else v for k, v in (parameters or {}).items()
    }
    with _kernel_environment():
        try:
            return papermill.execute_notebook(
                str(notebook),
                None,  # keep it in memory: nothing half-written on disk
                parameters=params,
                kernel_name=kernel,
                cwd=str(cwd),
                progress_bar=False,
                start_timeout=start_timeout,
            )
        except PapermillExecutionError as err:
            tb = _ANSI.sub("", "\n".join(err.traceback or []))
            raise ReportError(
                f"{notebook} failed in cell {err.exec_count} with {err.ename}: "
                f"{_ANSI.sub('', str(err.evalue))}\n{tb}"
            ) from None


def normalise(nb):
    """A copy of executed notebook ``nb`` with every run-dependent field fixed (see the module
    docstring); raises :class:`ReportError` for an output that shows a memory address."""
    nb = copy.deepcopy(nb)
    papermill = nb.metadata.pop("papermill", {}) or {}
    if papermill.get("parameters"):
        nb.metadata["papermill"] = {"parameters": papermill["parameters"]}
    language = nb.metadata.get("language_info", {}).get("name")
    if language:
        nb.metadata["language_info"] = {"name": language}
    nb.metadata.pop("widgets", None)
    count, seen = 0, set()
    for i, cell in enumerate(nb.cells):
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
        if INJECTED_ID in cell.metadata.get("tags", []):
            cell.id = INJECTED_ID
        if not cell.get("id") or cell.id in seen:
            cell.id = f"cell-{i:03d}"
        seen.add(cell.id)
        if cell.cell_type != "code":
            continue
        count += 1
        cell.execution_count = count
        for out in cell.get("outputs", []):
            if "execution_count" in out:
                out.execution_count = count
            texts = [out.get("text", "")] + [
                v for k, v in out.get("data", {}).items() if k.startswith("text/")
            ]
            for text in texts:
                text = "".join(text) if isinstance(text, list) else str(text)
                hit = _ADDRESS.search(text)
                if hit:
                    start = text.rfind("<", 0, hit.start())
                    shown = text[max(start, 0) : hit.end() + 1]
                    raise ReportError(
                        f"{_cell_label(nb, i)} shows a memory address ({shown!r}), which "
                        "changes on every run; end the line with ';' or show the object's "
                        "content instead."
                    )
    return nb


def _title(nb, default: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return default


#: nbconvert's lab template, with an image's ``alt`` metadata (``Image(..., alt=caption)``) as
#: the ``<img>``'s alternative text (the lab template drops it), and nothing from the network:
#: the lab template's ``<script src>`` of require.js, MathJax and mermaid (public CDNs) are left
#: out -- the reports have no widget, no math and no diagram, their CSS is inlined by nbconvert,
#: their figures are ``data:`` URIs and their own scripts are inline -- so a page opens offline
#: and tells no third party that it was opened
_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{% block data_png scoped %}
{%- set alt = output | get_metadata('alt', 'image/png') -%}
{%- if alt %}{{ super() | replace('<img ', '<img alt="' ~ (alt | escape_html) ~ '" ', 1) }}
{%- else %}{{ super() }}{% endif %}
{%- endblock data_png %}
"""


def to_html(nb, title: str = "report") -> str:
    """HTML of ``nb`` with no input cell and no prompt (nbconvert ``lab`` template)."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    c = Config()
    c.HTMLExporter.exclude_input = True
    c.HTMLExporter.exclude_input_prompt = True
    c.HTMLExporter.exclude_output_prompt = True
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_cell_tags = {"remove-cell"}
    c.TagRemovePreprocessor.remove_all_outputs_tags = {"remove-output"}
    exporter = HTMLExporter(config=c, template_name="lab")
    exporter.extra_loaders = [DictLoader({"report.html.j2": _TEMPLATE})]
    exporter.template_file = "report.html.j2"
    nb = copy.deepcopy(nb)
    nb.metadata["title"] = _title(nb, title)
    # a code cell without output would leave only an empty box once its input is hidden
    nb.cells = [c for c in nb.cells if c.cell_type != "code" or c.get("outputs")]
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    return body


def _write_atomic(path: Path, data: bytes) -> None:
    from .provenance import write_bytes_atomic

    write_bytes_atomic(path, data)


def render_report(
    notebook: str | Path,
    ipynb: str | Path,
    html: str | Path,
    parameters: Mapping[str, object] | None = None,
    cwd: str | Path = ".",
    kernel: str = KERNEL,
) -> tuple[Path, Path]:
    """Execute ``notebook`` with ``parameters`` and write the normalised notebook to ``ipynb``
    and its code-free HTML to ``html`` (both atomically, both or neither)."""
    import nbformat

    executed = normalise(execute(notebook, parameters, cwd=cwd, kernel=kernel))
    page = to_html(executed, title=Path(html).stem)
    text = nbformat.writes(executed)
    if not text.endswith("\n"):
        text += "\n"
    ipynb, html = Path(ipynb), Path(html)
    _write_atomic(ipynb, text.encode())
    _write_atomic(html, page.encode())
    return ipynb, html


def main(argv: list[str] | None = None) -> int:
    """``python3 -m softmax_ood.report NOTEBOOK IPYNB HTML [-p NAME VALUE]... [--cwd DIR]``."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(
        prog="python3 -m softmax_ood.report",
        description="Execute a report notebook with papermill and write a deterministic "
        ".ipynb and a code-free .html.",
    )
    ap.add_argument("notebook")
    ap.add_argument("ipynb")
    ap.add_argument("html")
    ap.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="a notebook parameter (a string); repeat for several",
    )
    ap.add_argument("--cwd", default=".", help="the kernel's working directory (default: .)")
    ap.add_argument("--kernel", default=KERNEL)
    args = ap.parse_args(argv)
    try:
        render_report(
            args.notebook,
            args.ipynb,
            args.html,
            dict(args.parameter),
            cwd=args.cwd,
            kernel=args.kernel,
        )
    except ReportError as err:
        print(f"report error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
