"""Config validation (JSON schema + cross-references) and the list of runs a study needs.

:func:`validate_config` fills schema defaults and turns the first problem into ONE readable
sentence naming the key, the bad value and the allowed values, e.g.::

    config error: losses.logitnorm.loss is 'logitnrom'; allowed values: ce, godin, logitnorm, logitpenalty

It imports only jsonschema and yaml, so the Snakefile can call it at parse time cheaply.
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

__all__ = ["ConfigError", "load_schema", "logitnorm_runs", "tau_variant", "validate_config"]


class ConfigError(ValueError):
    """The config is invalid; the message is one sentence."""


def load_schema(path: Path | str) -> dict:
    return yaml.safe_load(Path(path).read_text())


def _fill_defaults(instance, schema):
    """Insert schema ``default`` values for missing object properties (recursively)."""
    if not isinstance(instance, dict) or schema.get("type") not in (None, "object"):
        return
    for key, sub in (schema.get("properties") or {}).items():
        if key not in instance and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if key in instance:
            _fill_defaults(instance[key], sub)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for key, value in instance.items():
            if key not in (schema.get("properties") or {}):
                _fill_defaults(value, extra)


def _where(path) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def _sentence(err) -> str:
    where = _where(err.absolute_path)
    v = err.validator
    if v == "enum" and "propertyNames" in err.schema_path:
        allowed = ", ".join(str(a) for a in err.validator_value)
        return (
            f"config error: {where} has the unknown name {err.instance!r}; allowed names: {allowed}"
        )
    if v == "enum":
        allowed = ", ".join(str(a) for a in err.validator_value)
        return f"config error: {where} is {err.instance!r}; allowed values: {allowed}"
    if v == "propertyNames":
        # the offending key is reported by the nested error
        inner = err.context[0] if err.context else None
        bad = inner.instance if inner is not None else err.instance
        allowed = err.validator_value.get("enum")
        tail = (
            f"; allowed names: {', '.join(allowed)}"
            if allowed
            else f"; names must match {err.validator_value.get('pattern')}"
        )
        return f"config error: {where} has the unknown name {bad!r}{tail}"
    if v == "required":
        return (
            f"config error: {where} is missing the required key {err.message.split(chr(39))[1]!r}"
        )
    if v == "additionalProperties":
        allowed = ", ".join(sorted(err.schema.get("properties", {})))
        return f"config error: {where}: {err.message}; allowed keys: {allowed}"
    return f"config error: {where}: {err.message}"


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise ConfigError(f"config error: {msg}")


def _names(where: str, value, allowed) -> None:
    values = value if isinstance(value, list) else [value]
    for v in values:
        _check(v in allowed, f"{where} is {v!r}; allowed values: {', '.join(sorted(allowed))}")


def validate_config(config: dict, schema_path: Path | str) -> dict:
    """Validate ``config`` against the schema and its cross-references; return it with defaults.

    :raises ConfigError: one sentence naming the key, the bad value and the allowed values.
    """
    import jsonschema

    config = copy.deepcopy(dict(config))
    schema = load_schema(schema_path)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(
        validator.iter_errors(config), key=lambda e: (len(e.absolute_path), str(e.absolute_path))
    )
    if errors:
        raise ConfigError(_sentence(errors[0]))
    _fill_defaults(config, schema)

    archs, losses, scores = config["architectures"], config["losses"], config["scores"]
    for name, entry in losses.items():
        if entry["loss"] == "logitnorm":
            _check(
                "tau" in entry,
                f"losses.{name} is a LogitNorm loss without tau "
                "(the paper uses tau = 0.04 for CIFAR-10; there is no code default)",
            )
        if entry["loss"] == "logitpenalty":
            _check("lam" in entry, f"losses.{name} is a LogitPenalty loss without lam")
    data = config["data"]
    ood_sets = list(data["ood_test"]) + list(data["ood_val"])
    study = config["logitnorm"]
    _names("logitnorm.main_arch", study["main_arch"], archs)
    _names("logitnorm.arch_table", study["arch_table"], archs)
    _names("logitnorm.main_losses", study["main_losses"], losses)
    for key in ("baseline", "method", "penalty", "godin"):
        _names(f"logitnorm.{key}", study[key], losses)
    _check(
        losses[study["method"]]["loss"] == "logitnorm",
        f"logitnorm.method is {study['method']!r}, which is not a LogitNorm loss",
    )
    _names("logitnorm.scores", study["scores"], scores)
    _names("logitnorm.monitor_set", study["monitor_set"], ood_sets)
    _names("logitnorm.norm_ood_set", study["norm_ood_set"], ood_sets)
    if data["source"] == "embedded":
        _check(
            data["dataset"] == "digits",
            f"data.dataset is {data['dataset']!r} but data.source is 'embedded'; "
            "the embedded source provides only: digits",
        )
    return config


def tau_variant(config: dict, tau: float) -> str:
    """Loss-variant name for LogitNorm at ``tau`` (the study's method itself when tau matches)."""
    method = config["logitnorm"]["method"]
    if float(config["losses"][method]["tau"]) == float(tau):
        return method
    return f"{method}-tau{tau:g}"


def expanded_losses(config: dict) -> dict:
    """The configured loss variants plus the tau-ablation variants of the LogitNorm study."""
    out = dict(config["losses"])
    method = config["logitnorm"]["method"]
    for tau in config["logitnorm"]["tau_ablation"]:
        name = tau_variant(config, tau)
        if name not in out:
            out[name] = {**config["losses"][method], "tau": float(tau)}
    return out


def logitnorm_runs(config: dict) -> list[tuple[str, str, int]]:
    """Every (arch, loss variant, seed) the LogitNorm study trains, sorted and de-duplicated."""
    s = config["logitnorm"]
    pairs = {(s["main_arch"], loss) for loss in s["main_losses"]}
    pairs |= {(arch, loss) for arch in s["arch_table"] for loss in (s["baseline"], s["method"])}
    pairs |= {(s["main_arch"], tau_variant(config, t)) for t in s["tau_ablation"]}
    return sorted((a, loss, int(seed)) for a, loss in pairs for seed in config["seeds"])
