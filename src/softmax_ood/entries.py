"""Building a named entry of a registry (a loss, a model family, a score, a featurizer) from
config keyword arguments, with one-sentence errors: an unknown name lists the choices, an unknown
key lists the accepted ones, and a hyperparameter without a code default must be given."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

__all__ = ["check_kwargs", "lookup"]


def lookup(kind: str, registry: Mapping[str, Any], name: str) -> Any:
    """``registry[name]``, or ``ValueError: unknown <kind> 'name'; expected one of [...]``."""
    if name not in registry:
        raise ValueError(f"unknown {kind} {name!r}; expected one of {sorted(registry)}")
    return registry[name]


def check_kwargs(
    kind: str,
    name: str,
    cls: type,
    params: Mapping[str, Any],
    *,
    skip: tuple[str, ...] = ("self",),
    word: str = "parameter",
) -> None:
    """``params`` fit ``cls.__init__``: no unknown key, every argument without a default given
    (``skip`` lists arguments the caller supplies itself)."""
    sig = inspect.signature(cls.__init__).parameters
    accepted = [p for p in sig if p not in skip]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(
            f"{kind} {name!r} got unknown {word}(s) {unknown}; accepted {word}s: {accepted}"
        )
    missing = [p for p in accepted if sig[p].default is inspect.Parameter.empty and p not in params]
    if missing:
        raise ValueError(
            f"{kind} {name!r} requires {word}(s) {missing} to be set explicitly (no defaults in "
            f"code); accepted {word}s: {accepted}"
        )
