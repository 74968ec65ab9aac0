"""The library's size limits (issue 43): no function over :data:`MAX_FUNCTION` lines and no module
over :data:`MAX_MODULE` lines in ``src/`` (tests excluded), unless the README's *Size exceptions*
list names it with a one-line reason; a listed item that is back under its limit, or gone, is
taken off the list (the list says what is true now)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "softmax_ood"
MAX_FUNCTION = 80
MAX_MODULE = 600
#: a list item: ``- `<path relative to src/softmax_ood>[:<function>]`: <reason>``
ITEM = re.compile(r"^- `([\w/.]+\.py)(?::([\w.]+))?`: (\S.*)$")


def over_limit(src: Path = SRC) -> set[str]:
    """``path`` (module) and ``path:function`` items over their limit."""
    out = set()
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if "/tests/" in f"/{rel}":
            continue
        text = path.read_text()
        if text.count("\n") > MAX_MODULE:
            out.add(rel)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.end_lineno - node.lineno + 1 > MAX_FUNCTION:
                    out.add(f"{rel}:{node.name}")
    return out


def listed(readme: str) -> dict[str, str]:
    """The README's *Size exceptions* section: item -> reason."""
    section = readme.split("### Size exceptions", 1)[1].split("\n#", 1)[0]
    out = {}
    for line in section.splitlines():
        m = ITEM.match(line)
        if m:
            out[m[1] + (f":{m[2]}" if m[2] else "")] = m[3]
    return out


def test_every_function_and_module_over_its_limit_is_a_listed_exception():
    exceptions = listed((ROOT / "README.md").read_text())
    missing = sorted(over_limit() - set(exceptions))
    assert not missing, f"over the size limit and not in the README's Size exceptions: {missing}"
    stale = sorted(set(exceptions) - over_limit())
    assert not stale, f"in the README's Size exceptions but within the limit (or gone): {stale}"


def test_the_size_check_sees_long_functions_and_modules(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "tests").mkdir(parents=True)
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION))
    (pkg / "long.py").write_text(f"def f():\n{body}\n")
    (pkg / "big.py").write_text("x = 1\n" * (MAX_MODULE + 1))
    (pkg / "tests" / "test_x.py").write_text("x = 1\n" * (MAX_MODULE + 1))
    assert over_limit(pkg) == {"long.py:f", "big.py"}
    readme = "### Size exceptions\n\n- `big.py`: data tables\n- `long.py:f`: one table\n\n## Next"
    assert listed(readme) == {"big.py": "data tables", "long.py:f": "one table"}
