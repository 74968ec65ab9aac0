"""Derived code inputs: which of this project's modules a workflow script really runs.

A rule's result changes when any project module its script imports (directly or through other
modules, including imports inside functions and the package ``__init__`` files on the way)
changes. :func:`code_inputs` finds those files by parsing (never importing) the script and each
module it reaches, so rules list them as inputs without a hand-kept ``code=`` list that drifts.

Registries whose entries live in one file (the losses) are finer: :func:`entry_digest` hashes a
file with every *other* registry entry's source cut out, so editing one loss class reruns only
the trainings that use it while editing a shared helper in that file reruns them all.

No torch import: the Snakefile uses this module at parse time.
"""

from __future__ import annotations

import ast
import hashlib
from functools import cache
from pathlib import Path

__all__ = [
    "class_params",
    "code_inputs",
    "eager_imports",
    "entry_digest",
    "entry_files",
    "imported_from",
    "imported_modules",
    "module_file",
    "module_inputs",
    "registry_entries",
    "use_cache",
]

PACKAGE = "softmax_ood"


def _module_name(path: Path, src: Path) -> str | None:
    try:
        rel = path.resolve().relative_to(src.resolve())
    except ValueError:
        return None
    parts = list(rel.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _notebook_source(path: Path) -> str:
    import json

    cells = json.loads(path.read_text()).get("cells", [])
    code = []
    for c in cells:
        if c.get("cell_type") == "code":
            src = "".join(c.get("source", []))
            code.append(
                "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
            )
    return "\n\n".join(code)


def imported_modules(path: Path, module: str | None = None) -> set[str]:
    """Absolute names of every module ``path`` imports anywhere (relative imports resolved
    against ``module``, the file's own module name; ``from a import b`` yields ``a`` and
    ``a.b``, since ``b`` may be a submodule). Each file is parsed once per version (its
    modification time and size): every rule's closure shares the core modules."""
    path = Path(path)
    st = path.stat()
    return set(_imported_modules(str(path.resolve()), module, st.st_mtime_ns, st.st_size))


_DISK = None  # a softmax_ood.startcache.JsonCache: imports by text digest, kept between starts


def use_cache(cache) -> None:
    """Keep each file's imports in ``cache`` (a :class:`softmax_ood.startcache.JsonCache`),
    keyed by the sha256 of its text and its module name, so a Snakemake start parses only the
    modules whose text changed; None: parse every file once per process."""
    global _DISK
    _DISK = cache
    _imported_modules.cache_clear()


@cache
def _imported_modules(path: str, module: str | None, _mtime_ns: int, _size: int) -> frozenset:
    path = Path(path)
    text = _notebook_source(path) if path.suffix == ".ipynb" else path.read_text()
    is_pkg = path.name == "__init__.py"
    key = None
    if _DISK is not None:
        digest = hashlib.sha256(text.encode()).hexdigest()
        key = f"{module}\0{int(is_pkg)}\0{digest}"
        hit = _DISK.get(key)
        if isinstance(hit, list):
            return frozenset(hit)
    out = _parse_imports(text, path, module, is_pkg)
    if key is not None:
        _DISK.put(key, sorted(out))
    return out


def _eager_nodes(body):
    """The statements of ``body`` that run when the module is imported: module-level code,
    inside ``if`` / ``try`` / ``with`` blocks and class bodies, not function bodies nor
    ``if TYPE_CHECKING:`` blocks."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _eager_nodes(node.orelse)
            continue
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _eager_nodes(inner)


def eager_imports(path: Path, module: str | None = None) -> set[str]:
    """As :func:`imported_modules`, only the imports that run when ``path`` is imported (not
    those inside functions, which run when the function is called)."""
    path = Path(path)
    tree = ast.parse(path.read_text(), filename=str(path))
    return set(_names(_eager_nodes(tree.body), module, path.name == "__init__.py"))


def _parse_imports(text: str, path: Path, module: str | None, is_pkg: bool) -> frozenset:
    return _names(ast.walk(ast.parse(text, filename=str(path))), module, is_pkg)


def _names(nodes, module: str | None, is_pkg: bool) -> frozenset:
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if module is None:
                    continue
                base = module.split(".")
                base = base if is_pkg else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.add(name)
            out.update(f"{name}.{a.name}" for a in node.names if a.name != "*")
    return frozenset(out)


def module_file(name: str, src: Path) -> Path | None:
    """``src/a/b.py`` or ``src/a/b/__init__.py`` for module ``a.b``; None if neither exists."""
    base = Path(src, *name.split("."))
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


@cache
def _closure(script: str, src: str) -> tuple[str, ...]:
    srcp = Path(src)
    seen: dict[str, Path] = {}
    todo = [(Path(script), _module_name(Path(script), srcp))]
    while todo:
        path, modname = todo.pop()
        for name in sorted(imported_modules(path, modname)):
            if name != PACKAGE and not name.startswith(PACKAGE + "."):
                continue
            parts = name.split(".")
            for i in range(1, len(parts) + 1):  # parents' __init__ run first
                sub = ".".join(parts[:i])
                if sub in seen:
                    continue
                f = module_file(sub, srcp)
                if f is None:
                    continue
                seen[sub] = f
                todo.append((f, sub))
    return tuple(sorted({p.as_posix() for p in seen.values()}))


def code_inputs(script: str | Path, src: str | Path = "src", exclude=()) -> list[str]:
    """Project module files ``script`` (a .py or .ipynb) runs, transitively, sorted; paths as
    given by ``src`` (relative to the working directory when ``src`` is)."""
    skip = {Path(e).as_posix() for e in exclude}
    return [p for p in _closure(str(script), str(src)) if p not in skip]


def module_inputs(ref: str, src: str | Path = "src") -> list[str]:
    """Project module files a ``"module:name"`` reference runs: its module, the packages it sits
    in, and what it imports, transitively; sorted, paths as given by ``src``."""
    name = ref.split(":")[0]
    parts = name.split(".")
    files = {module_file(".".join(parts[:i]), Path(src)) for i in range(1, len(parts) + 1)}
    own = module_file(name, Path(src))
    found = set(code_inputs(own, src)) if own is not None else set()
    return sorted(found | {f.as_posix() for f in files if f is not None})


def registry_entries(path: str | Path, registry: str) -> dict[str, str]:
    """``{key: Name}`` of a plain-dict registry ``registry = {"key": Name, ...}`` in ``path``."""
    text = Path(path).read_text()
    for node in ast.parse(text).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if (
            isinstance(target, ast.Name)
            and target.id == registry
            and isinstance(node.value, ast.Dict)
        ):
            return {
                k.value: v.id
                for k, v in zip(node.value.keys, node.value.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(v, ast.Name)
            }
    raise ValueError(f"{path} defines no dict registry {registry!r}")


def entry_digest(path: str | Path, registry: str, key: str) -> str:
    """sha256 (16 hex) of ``path`` with the source of every registry entry except ``key``'s
    removed: changes when ``key``'s own class or any shared code in the file changes."""
    path = Path(path)
    entries = registry_entries(path, registry)
    if key not in entries:
        raise ValueError(
            f"{registry} in {path} has no entry {key!r}; entries: {', '.join(sorted(entries))}"
        )
    others = {name for k, name in entries.items() if k != key and name != entries[key]}
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name in others:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            drop.update(range(start - 1, node.end_lineno))
    kept = "".join(ln for i, ln in enumerate(lines) if i not in drop)
    return hashlib.sha256(kept.encode()).hexdigest()[:16]


def class_params(path: str | Path, name: str, skip=("self",)) -> tuple[list[str], list[str]]:
    """``(accepted, required)`` keyword names of class ``name``'s ``__init__`` (or of function
    ``name``) in ``path``, read from the source: lets the config be checked against the code
    without importing torch."""
    text = Path(path).read_text()
    for node in ast.parse(text).body:
        fn = None
        if isinstance(node, ast.ClassDef) and node.name == name:
            fn = next(
                (b for b in node.body if isinstance(b, ast.FunctionDef) and b.name == "__init__"),
                None,
            )
            if fn is None:
                return [], []
        elif isinstance(node, ast.FunctionDef) and node.name == name:
            fn = node
        if fn is None:
            continue
        a = fn.args
        pos = a.posonlyargs + a.args
        pos_defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
        params = list(zip(pos, pos_defaults, strict=True)) + list(
            zip(a.kwonlyargs, a.kw_defaults, strict=True)
        )
        accepted = [p.arg for p, _ in params if p.arg not in skip]
        required = [p.arg for p, d in params if d is None and p.arg not in skip]
        return accepted, required
    raise ValueError(f"{path} defines no top-level class or function {name!r}")


def imported_from(path: str | Path, name: str) -> Path:
    """The file that ``path`` (a package ``__init__``) imports ``name`` from (``from .x import
    name``); ``path`` itself when ``name`` is defined there."""
    path = Path(path)
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            if any(a.name == name for a in node.names):
                return path.parent / f"{node.module.replace('.', '/')}.py"
    return path


def entry_files(package_init: str | Path, name: str) -> dict[str, Path]:
    """``{key: file defining the entry's class}`` for the dict ``name`` in a package
    ``__init__`` that imports its entries from submodules (the model families)."""
    return {
        key: imported_from(package_init, cls)
        for key, cls in registry_entries(package_init, name).items()
    }
