"""The audit's verdict for each table and figure of the section (:func:`audit_records`: its
recorded input hashes checked against the files), written by a rule so a stale or tampered input
shows on the page."""

from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path


def _prov_of(path: str) -> str:
    p = Path(path)
    return str(p.with_name(p.stem + ".prov.json"))


def audit_records(paths: Iterable[str], root: str | Path = ".") -> dict[str, dict]:
    """For each file (relative to ``root``): its provenance (rule, script, library modules,
    commit, config hash, seeds, recorded input hashes), its sidecar, and the audit's verdict:
    whether every hash recorded along its chain back to the data matches the files on disk, how
    many were checked and which differ. Nothing host-specific is recorded."""
    from ..audit import Auditor

    root = Path(root).resolve()
    cache: dict[str, str | None] = {}
    out = {}
    for rel in paths:
        rel = str(rel)
        auditor = Auditor(root)
        auditor._hash_cache = cache  # one hash per file for the whole page
        node = auditor.node(rel)
        auditor.walk(rel, out=io.StringIO())
        prov = _prov_of(rel)
        git = node.git or {}
        out[rel] = {
            "provenance": prov if (root / prov).is_file() else None,
            "rule": node.rule,
            "script": node.script,
            "modules": list(node.modules),
            "git": {"commit": git.get("commit"), "dirty": git.get("dirty")},
            "config_sha256": node.config_sha256,
            "seeds": node.seeds,
            "inputs": {c.name: {"path": c.path, "sha256": c.sha256} for c in node.checks},
            "checked": int(auditor.n_checked),
            "differs": list(auditor.differs),
            "ok": not auditor.differs and auditor.n_checked > 0,
        }
    return out
