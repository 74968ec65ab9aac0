"""Reading YAML: the one safe loader the config checks and the paper sources' reader share. It
imports nothing of the library, so a data module reads YAML without importing the config."""

from __future__ import annotations

import yaml

__all__ = ["safe_load"]


def safe_load(text: str):
    """``yaml.safe_load`` through libyaml's C parser when PyYAML has it (the same safe
    constructor, so the same values; about 10x faster: the Snakefile parses the config and six
    schemas at every start)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
