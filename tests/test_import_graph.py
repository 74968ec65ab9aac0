"""The library's import graph, read statically (``ast``: module-level and function-level imports
alike): no circle, no module importing one that stands above it in :data:`LAYERS`, and no study
importing another study's private (underscore) name (parametrised over the registry)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

from softmax_ood.studies.registry import STUDIES

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "softmax_ood"

#: the library's floors, bottom first: a module may import its own floor and those below it,
#: never one above. An entry is a module or a package (which holds all its submodules), named
#: without the leading ``softmax_ood.``; the root package is ``""``. Every module is on one floor.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "foundations",
        (
            "",
            "errors",
            "numerics",
            "softmax",
            "metrics",
            "entries",
            "codedeps",
            "runs",
            "yamlio",
            "provenance",  # hashes, records and atomic writes every stage uses (data, train)
        ),
    ),
    (
        "data and downloads",
        (
            "data",
            "download",
            "paper_data",
            "fashion",
            "farsets",
            "imagesources",
            "corruptions",
            "imagebatch",
        ),
    ),
    # config checks names against the code's registries and the datasets' OOD sets: it stands
    # above what it checks (it parses losses, models and scores from source, imports no torch)
    ("config", ("config",)),
    (
        "training and models",
        ("losses", "models", "scores", "calibration", "discriminator", "train", "experiment"),
    ),
    ("evaluation", ("evaluation",)),
    ("analysis", ("analysis",)),
    ("study registry", ("studies",)),
    (
        "single-paper studies",
        ("studies.kang", "studies.logitnorm", "studies.seddik", "studies.ulmer"),
    ),
    ("cross-paper study", ("studies.crosspaper",)),
    (
        "provenance checks, results and the workflow's tools",
        (
            "audit",
            "rulefiles",
            "golden",
            "stale",
            "share",
            "report",
            "results_section",
            "cli",
            "estimate",
            "startcache",
        ),
    ),
)


def _modules(src: Path = SRC) -> dict[str, Path]:
    """Every importable module of the library (``tests`` packages and scripts left out): full
    dotted name -> file."""
    out = {}
    for path in sorted((src / ROOT).rglob("*.py")):
        rel = path.relative_to(src)
        if "tests" in rel.parts or not all(
            (src / Path(*rel.parts[:i]) / "__init__.py").is_file() for i in range(1, len(rel.parts))
        ):
            continue
        parts = rel.with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _known(name: str, modules) -> str | None:
    """``name`` or the nearest enclosing module of it that is one of ``modules``."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` names."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    if path.name != "__init__.py":
        parts = parts[:-1]
    parts = parts[: len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, modules) -> set[str]:
    """The library modules ``module`` imports anywhere in its file (module or function level)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {_known(a.name, modules) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, path, node)
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.add(sub if sub in modules else _known(base, modules))
    return found - {None, module}


@cache
def graph(src: Path = SRC) -> dict[str, set[str]]:
    modules = _modules(src)
    return {m: imports_of(m, p, modules) for m, p in modules.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: each strongly connected component of more than one module (or a
    module importing itself), sorted (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def layer_of(module: str) -> int | None:
    """The floor (index into :data:`LAYERS`) of a full module name, by its longest entry."""
    short = "" if module == ROOT else module.removeprefix(ROOT + ".")
    best = None
    for i, (_, entries) in enumerate(LAYERS):
        for e in entries:
            if short == e or (e and short.startswith(e + ".")):
                if best is None or len(e) > best[1]:
                    best = (i, len(e))
    return None if best is None else best[0]


def upward(edges: dict[str, set[str]]) -> list[str]:
    """Each import of a module standing on a higher floor than the importer."""
    out = []
    for m, deps in sorted(edges.items()):
        for d in sorted(deps):
            if layer_of(d) > layer_of(m):
                out.append(f"{m} ({LAYERS[layer_of(m)][0]}) imports {d} ({LAYERS[layer_of(d)][0]})")
    return out


def test_the_graph_reader_sees_function_level_and_relative_imports(tmp_path):
    """The reader itself: a circle closed inside a function is a circle, ``from . import x``
    names module ``x`` (not the package), an upward import is reported."""
    pkg = tmp_path / ROOT
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("def f():\n    from .sub import a\n")
    (pkg / "sub" / "a.py").write_text("from .. import errors\nfrom . import b\n")
    (pkg / "sub" / "b.py").write_text("X = 1\n")
    (pkg / "config.py").write_text("from .sub.b import X\n")
    edges = graph(tmp_path)
    assert edges[f"{ROOT}.sub.a"] == {f"{ROOT}.errors", f"{ROOT}.sub.b"}
    assert cycles(edges) == [[f"{ROOT}.errors", f"{ROOT}.sub.a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert upward({f"{ROOT}.errors": {f"{ROOT}.config"}, f"{ROOT}.config": set()})


def test_every_module_stands_on_one_declared_floor():
    names = [e for _, entries in LAYERS for e in entries]
    assert len(names) == len(set(names)), "a LAYERS entry is listed twice"
    unplaced = [m for m in graph() if layer_of(m) is None]
    assert not unplaced, f"modules on no floor of LAYERS (place them): {unplaced}"
    unused = [e for e in names if not any(_names(m, e) for m in graph())]
    assert not unused, f"LAYERS entries that name no module: {unused}"
    studies = [s for s in STUDIES if f"studies.{s}" not in names]
    assert not studies, f"registered studies on no floor of their own in LAYERS: {studies}"


def _names(module: str, entry: str) -> bool:
    short = "" if module == ROOT else module.removeprefix(ROOT + ".")
    return short == entry or (entry != "" and short.startswith(entry + "."))


def test_the_library_has_no_import_circle():
    found = cycles(graph())
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_no_module_imports_one_on_a_higher_floor():
    found = upward(graph())
    assert not found, "upward imports: " + "; ".join(found)


def _other_study_privates(name: str, path: Path) -> list[str]:
    """The private names ``path`` (a file of study ``name``) takes from another study: an
    underscore name imported from it, an underscore module of it, or an underscore attribute of
    a module of it bound to a name."""
    package = f"{ROOT}.studies."
    rel = path.relative_to(SRC).with_suffix("")
    module = ".".join(rel.parts[:-1] if rel.parts[-1] == "__init__" else rel.parts)
    tree = ast.parse(path.read_text(), str(path))

    def other(target: str) -> bool:
        if not target.startswith(package):
            return False
        study = target.removeprefix(package).split(".")[0]
        return study in STUDIES and study != name

    def private(dotted: str) -> bool:
        return any(p.startswith("_") and p != "__init__" for p in dotted.split("."))

    found, aliases = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if other(a.name):
                    if private(a.name):
                        found.append(a.name)
                    aliases.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, path, node)
            if not other(base):
                continue
            if private(base.removeprefix(package)):
                found.append(base)
            for a in node.names:
                if a.name.startswith("_"):
                    found.append(f"{base}.{a.name}")
                elif not a.name[:1].isupper():  # a module or a function: track its attributes
                    aliases.add(a.asname or a.name)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{node.value.id}.{node.attr}")
    return [f"{path.relative_to(SRC)}: {f}" for f in found]


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_a_study_takes_no_private_name_of_another_study(name):
    """Studies talk through public faces: nothing in a study's package (modules, scripts,
    tests) imports another study's underscore name."""
    files = sorted((SRC / ROOT / "studies" / name).rglob("*.py"))
    assert files
    found = [f for path in files for f in _other_study_privates(name, path)]
    assert not found, "private names of another study: " + "; ".join(found)


def test_the_private_name_check_sees_each_form(tmp_path, monkeypatch):
    """A name, a module and an attribute taken privately are each reported; public ones not."""
    study = SRC / ROOT / "studies" / "crosspaper" / "_probe_not_a_file.py"
    text = (
        "from ..kang.claims import _per_seed, claims_table\n"
        "from ..kang._hidden import x\n"
        "from ..seddik import claims as seddik\n"
        "import softmax_ood.studies.seddik.theory as th\n"
        "from .claims import _own\n"
        "seddik._bar, seddik.BAR, th._t, th.__doc__\n"
    )
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: text)
    found = _other_study_privates("crosspaper", study)
    assert [f.split(": ")[1] for f in found] == [
        f"{ROOT}.studies.kang.claims._per_seed",
        f"{ROOT}.studies.kang._hidden",
        "seddik._bar",
        "th._t",
    ]
