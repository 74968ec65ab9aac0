"""Which script each rule of the workflow runs, read from the text of its rule files (no
Snakemake import): named rules and checkpoints, the rules every study shares
(``name: f"{...}_<suffix>"``, ``rules/study.smk``) and the rules defined once per job unit
(``name: unit_rule("train", _unit)``, ``rules/train.smk``). :mod:`softmax_ood.audit` names a
result's script by the rule that made it."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["RULE_FILES", "rule_scripts", "script_of"]

RULE_FILES = ("rules/*.smk", "src/softmax_ood/studies/*/rules.smk")


def rule_scripts(root: Path) -> dict[str, str]:
    """``{rule: script or notebook path}`` read from the rule files of the workflow in ``root``
    (paths relative to it); a rule every study shares is keyed ``*_<suffix>``."""
    root = root.resolve()
    scripts: dict[str, str] = {}
    for pattern in RULE_FILES:
        for smk in sorted(root.glob(pattern)):
            scripts.update(_file_scripts(smk, root))
    return scripts


def script_of(scripts: dict[str, str], rule: str) -> str | None:
    """The script of ``rule`` in ``scripts`` (:func:`rule_scripts`): its own, or that of the
    shared rule ``<study>_<suffix>``."""
    if rule in scripts:
        return scripts[rule]
    shared = [k for k in scripts if k.startswith("*_") and rule.endswith(k[1:])]
    return scripts[max(shared, key=len)] if shared else None


def _file_scripts(smk: Path, root: Path) -> dict[str, str]:
    """``{rule: script}`` of one rule file ``smk`` (a per-unit rule also as ``<rule>_seed``)."""
    out: dict[str, str] = {}
    rule = per_seed = None
    lines = smk.read_text().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*(?:rule|checkpoint)\s*(\w*)\s*:", line)
        if m:
            rule, per_seed = m.group(1) or None, None
            continue
        # a rule every study shares (rules/study.smk): name: f"{...}_<suffix>"
        # one rule per job unit (rules/train.smk): name: unit_rule("train", _unit)
        if re.match(r"\s+name:\s*$", line) and i + 1 < len(lines):
            shared = re.match(r'\s*f"\{[^}]+\}(_\w+)"', lines[i + 1])
            unit = re.match(r'\s*unit_rule\("(\w+)", _unit\)', lines[i + 1])
            if shared:
                rule = "*" + shared.group(1)
            elif unit:  # both units' names (rules/common.smk unit_rule)
                rule = unit.group(1)
                per_seed = f"{rule}_seed"
            continue
        if rule and re.match(r"\s+(script|notebook):\s*$", line):
            val = re.match(r'\s*[rf]?"([^"]+)"', lines[i + 1] if i + 1 < len(lines) else "")
            if val:
                script = _relative((smk.parent / val.group(1)).resolve(), root)
                out[rule] = script
                if per_seed:
                    out[per_seed] = script
    return out


def _relative(path: Path, root: Path) -> str:
    """``path`` (resolved) relative to ``root`` as POSIX text; as it is when outside ``root``."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
