"""What every Snakemake start recomputes, kept between starts, with hits that are exact.

The Snakefile parses each project module for its imports (the derived code inputs,
:mod:`softmax_ood.codedeps`) and hashes every recorded input and output (nothing stale
unnoticed, :mod:`softmax_ood.stale`) at every start, a no-op rerun included. Both are kept in
``.snakemake/softmax_ood/<name>.json`` under the workflow folder:

* a module's imports are keyed by the sha256 of its text (a hit is the same text);
* a file's sha256 is keyed by its ``(device, inode, size, mtime_ns, ctime_ns)``, as git's
  index does: writing a file, or setting its mtime back (``os.utime``), sets its ctime to the
  present, which no call can set back, so a file whose bytes changed misses the cache. An entry
  is kept only for a file whose ctime lies more than :data:`RACY_S` seconds in the past, so a
  later change cannot share its ctime tick.

A cache that is missing, unreadable or of another format is empty; it is written atomically
(a temporary file renamed) when the process exits, so concurrent starts (cluster jobs) never
read half a file. ``python -m softmax_ood.audit`` never uses it: it hashes everything.
Imports neither torch nor pandas (the Snakefile uses it).
"""

from __future__ import annotations

import atexit
import json
import os
import time
from pathlib import Path

__all__ = ["RACY_S", "JsonCache", "open_cache"]

FORMAT = 1
RACY_S = 2.0
_OPEN: dict[str, JsonCache] = {}


class JsonCache:
    """A ``{key: value}`` map of JSON values read from ``path`` (empty if it cannot be read),
    written back by :meth:`save` when something was added; entries this process never asked
    for (deleted files, old versions of a module) are dropped then."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.data: dict = {}
        self.used: set[str] = set()
        self.dirty = False
        try:
            raw = json.loads(self.path.read_text())
        except (OSError, ValueError):
            raw = None
        if isinstance(raw, dict) and raw.get("format") == FORMAT:
            entries = raw.get("entries")
            self.data = entries if isinstance(entries, dict) else {}

    def get(self, key: str):
        self.used.add(key)
        return self.data.get(key)

    def put(self, key: str, value) -> None:
        self.used.add(key)
        if self.data.get(key) != value:
            self.data[key] = value
            self.dirty = True

    def by_stat(self, path: Path, compute) -> str:
        """``compute(path)`` (a file's hash), from the cache when the file's stat identity
        (see the module docstring) is the one recorded with it; else computed and recorded
        unless racy."""
        st = path.stat()
        ident = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        key = str(path.resolve())
        hit = self.get(key)
        if isinstance(hit, list) and len(hit) == 2 and hit[0] == ident:
            return hit[1]
        value = compute(path)
        if st.st_ctime_ns < time.time_ns() - int(RACY_S * 1e9):
            self.put(key, [ident, value])
        return value

    def save(self) -> None:
        if not self.dirty:
            return
        self.data = {k: v for k, v in self.data.items() if k in self.used}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"format": FORMAT, "entries": self.data}, sort_keys=True))
            os.replace(tmp, self.path)
            self.dirty = False
        except OSError:
            pass  # a read-only workflow folder: the next start recomputes


def open_cache(root: str | Path, name: str) -> JsonCache:
    """The cache ``<root>/.snakemake/softmax_ood/<name>.json``, saved at exit (one object per
    file and process)."""
    path = str(Path(root, ".snakemake", "softmax_ood", f"{name}.json").resolve())
    if path not in _OPEN:
        _OPEN[path] = JsonCache(path)
        atexit.register(_OPEN[path].save)
    return _OPEN[path]
