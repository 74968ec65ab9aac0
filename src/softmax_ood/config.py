"""Config validation: the core schema, names and parameters checked against the code's registries,
then each enabled study's own schema fragment and cross-references.

:func:`validate_config` fills schema defaults and turns the first problem into ONE readable
sentence naming the key, the bad value and the allowed values, e.g.::

    config error: losses.ln.loss is 'logitnrom'; allowed values: ce, godin, logitnorm, logitpenalty

The core imports no study: the caller (the Snakefile) passes the study registration modules in.
Names (loss, architecture family, score) and each entry's parameters are read from the code
(the ``LOSSES``/``MODELS``/``SCORES`` registries and the constructors' signatures) by parsing the
source, so a new loss needs no schema edit and nothing here imports torch: the Snakefile calls
this at parse time.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

import yaml

from .codedeps import class_params, imported_from, registry_entries
from .errors import ConfigError
from .runs import union_runs
from .yamlio import safe_load

__all__ = [
    "ConfigError",
    "all_runs",
    "check_names",
    "checked_configfile",
    "config_error",
    "expanded_losses",
    "load_schema",
    "safe_load",
    "study_section",
    "validate_config",
]

SRC = Path(__file__).resolve().parent
LOSSES_PY = SRC / "losses.py"
MODELS_INIT = SRC / "models" / "__init__.py"
SCORES_PY = SRC / "scores.py"
#: constructor arguments the workflow supplies itself (never config keys)
_MODEL_COMMON = ("self", "num_classes", "in_chans", "image_size", "head")


def config_error(msg: str) -> ConfigError:
    return ConfigError(f"config error: {msg}")


def load_schema(path: Path | str) -> dict:
    return safe_load(Path(path).read_text())


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
        raise config_error(msg)


def check_names(where: str, value, allowed) -> None:
    """Every name in ``value`` (a name or a list) is one of ``allowed``; else one sentence."""
    values = value if isinstance(value, list) else [value]
    for v in values:
        _check(v in allowed, f"{where} is {v!r}; allowed values: {', '.join(sorted(allowed))}")


def _check_params(where: str, params: dict, accepted, required, what: str) -> None:
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise config_error(
            f"{where} has the unknown key {unknown[0]!r} for {what}; allowed keys: "
            f"{', '.join(accepted) or '(none)'}"
        )
    missing = [r for r in required if r not in params]
    if missing:
        raise config_error(
            f"{where} is missing {missing[0]!r}, which {what} requires (there is no code default)"
        )


def _schema_with_studies(schema: dict, studies: Mapping[str, ModuleType]) -> dict:
    """The core schema with each study's fragment under its name and ``studies`` limited to them."""
    schema = copy.deepcopy(schema)
    names = sorted(studies)
    schema["properties"]["studies"]["items"] = {"enum": names}
    schema["properties"]["studies"]["default"] = names
    for name in names:
        schema["properties"][name] = load_schema(studies[name].SCHEMA)
    return schema


def _check_override_names(config: dict) -> None:
    """``score_overrides``: an unknown loss family or score is named as an unknown key, whatever
    its value (checked before the schema, which would call it a value of the wrong type)."""
    overrides = config.get("score_overrides")
    if not isinstance(overrides, dict):
        return
    losses = registry_entries(LOSSES_PY, "LOSSES")
    scores = registry_entries(SCORES_PY, "SCORES")
    for family, by_score in overrides.items():
        _check(
            family in losses,
            f"score_overrides has the unknown key {family!r}; allowed keys (loss families): "
            f"{', '.join(sorted(losses))}",
        )
        for score in by_score if isinstance(by_score, dict) else ():
            _check(
                score in scores,
                f"score_overrides.{family} has the unknown key {score!r}; allowed keys "
                f"(scores): {', '.join(sorted(scores))}",
            )


def _check_core(config: dict) -> None:
    losses = registry_entries(LOSSES_PY, "LOSSES")
    for name, entry in config["losses"].items():
        check_names(f"losses.{name}.loss", entry["loss"], losses)
        accepted, required = class_params(LOSSES_PY, losses[entry["loss"]])
        params = {k: v for k, v in entry.items() if k != "loss"}
        _check_params(f"losses.{name}", params, accepted, required, f"loss {entry['loss']!r}")
    models = registry_entries(MODELS_INIT, "MODELS")
    for name, entry in config["architectures"].items():
        check_names(f"architectures.{name}.family", entry["family"], models)
        cls = models[entry["family"]]
        accepted, required = class_params(imported_from(MODELS_INIT, cls), cls, skip=_MODEL_COMMON)
        params = {k: v for k, v in entry.items() if k != "family"}
        _check_params(
            f"architectures.{name}", params, accepted, required, f"family {entry['family']!r}"
        )
    scores = registry_entries(SCORES_PY, "SCORES")
    for name, params in config["scores"].items():
        check_names("scores", name, scores)
        accepted, required = class_params(SCORES_PY, scores[name])
        _check_params(f"scores.{name}", params or {}, accepted, required, f"score {name!r}")
    for family, by_score in config["score_overrides"].items():
        check_names("score_overrides", family, losses)
        for score, params in by_score.items():
            check_names(f"score_overrides.{family}", score, config["scores"])
            accepted, _ = class_params(SCORES_PY, scores[score])
            _check_params(
                f"score_overrides.{family}.{score}", params, accepted, [], f"score {score!r}"
            )
    for name in config.get("scheduling", {}).get("per_seed", []):
        check_names("scheduling.per_seed", name, config["recipes"])
    data = config["data"]
    ood_sets = list(data["ood_test"]) + list(data["ood_val"])
    if data["source"] == "embedded":  # the data's own names first, then who refers to them
        _check(
            data["dataset"] in ("digits", "fashion"),
            f"data.dataset is {data['dataset']!r} but data.source is 'embedded'; "
            "the embedded source provides only: digits, fashion",
        )
        _check_embedded_sets(data)
    for name, recipe in config["recipes"].items():
        if "monitor_set" in recipe:
            check_names(f"recipes.{name}.monitor_set", recipe["monitor_set"], ood_sets)
    if data["source"] != "embedded":
        _check(
            sorted(data["id_classes"]) == list(range(10))
            and not {"heldout_digits", "heldout_classes"} & set(ood_sets),
            "data.id_classes and the heldout_digits/heldout_classes sets belong to the embedded "
            "source only",
        )


def _check_embedded_sets(data: dict) -> None:
    """The embedded datasets' OOD set names and sizes: each dataset has its own builders."""
    if data["dataset"] == "fashion":
        from .fashion import FASHION_OOD_SETS, FASHION_VAL_SETS, SIZE

        tests = sorted(set(FASHION_OOD_SETS) - set(FASHION_VAL_SETS))
        vals, held, example = (
            sorted(FASHION_VAL_SETS),
            "heldout_classes",
            "[0, 1, 2, 3, 4, 5, 7, 8, 9]",
        )
        _check(
            data["image_size"] == SIZE,
            f"data.image_size is {data['image_size']} but Fashion-MNIST is stored at its own "
            f"size; set data.image_size: {SIZE}",
        )
    else:
        from .data import EMBEDDED_OOD_SETS

        tests = sorted(n for n in EMBEDDED_OOD_SETS if n != "gaussian_val")
        vals, held, example = ["gaussian_val"], "heldout_digits", "[0, 1, 2, 3, 4]"
    for key, allowed in (("ood_test", tests), ("ood_val", vals)):
        bad = [n for n in data[key] if n not in allowed]
        _check(
            not bad,
            f"data.{key} lists {bad}, which data.dataset {data['dataset']!r} does not provide; "
            f"allowed: {', '.join(allowed)}",
        )
    _check(
        held not in data["ood_test"] or len(data["id_classes"]) < 10,
        f"data.ood_test lists {held} but data.id_classes keeps all ten classes; "
        f"hold some out, for example id_classes: {example}",
    )


def validate_config(
    config: dict, schema_path: Path | str, studies: Mapping[str, ModuleType]
) -> dict:
    """Validate ``config`` (core schema + each study's fragment), fill defaults, check names and
    parameters against the code, then each enabled study's cross-references.

    :param studies: every study the workflow knows, name -> registration module (the core
        imports none; the Snakefile passes them in).
    :raises ConfigError: one sentence naming the key, the bad value and the allowed values.
    """
    import jsonschema

    config = copy.deepcopy(dict(config))
    for name in config.get("studies") or []:
        if name in studies and name not in config:
            config[name] = {}  # an enabled study's section defaults to its schema's defaults
    _check_override_names(config)
    schema = _schema_with_studies(load_schema(schema_path), studies)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(
        validator.iter_errors(config), key=lambda e: (len(e.absolute_path), str(e.absolute_path))
    )
    if errors:
        raise ConfigError(_sentence(errors[0]))
    _fill_defaults(config, schema)
    _check_core(config)
    for name in config["studies"]:
        _check(
            name in config, f"the study {name!r} is enabled but the config has no {name}: section"
        )
        studies[name].check(config)
    _check_replication(config, studies)
    return config


def _check_replication(config: dict, studies: Mapping[str, ModuleType]) -> None:
    """``replication``: registered studies that can replicate, fresh seeds when any is listed,
    and no fresh seed that a listed study already runs on (its own hook checks its other seed
    lists when it builds its replication job)."""
    rep = config.get("replication") or {}
    listed = list(rep.get("studies") or [])
    seeds = [int(s) for s in rep.get("seeds") or []]
    for name in listed:
        check_names("replication.studies", name, studies)
        _check(
            hasattr(studies[name], "replication_job"),
            f"replication.studies lists {name!r}, which cannot replicate (its registration "
            "has no replication_job hook); remove it",
        )
    _check(
        not listed or seeds,
        f"replication.studies lists {', '.join(listed)} but replication.seeds is empty",
    )
    for name in (n for n in listed if n in config["studies"]):
        own = sorted({int(s) for s in study_section(config, name).get("seeds") or []})
        shared = sorted(set(own) & set(seeds))
        _check(
            not shared,
            f"replication.seeds {seeds} share {shared} with the seeds of {name} ({own}); "
            "the replication seeds must be fresh",
        )
        studies[name].replication_job(config, seeds)


def study_section(config: dict, name: str) -> dict:
    """A study's config section with the global seeds filled in where it names none (no key, or
    ``seeds: null``, which lets an overlay put back the global seeds a config below it changed)."""
    spec = dict(config[name])
    if spec.get("seeds") is None:
        spec["seeds"] = list(config["seeds"])
    return spec


def expanded_losses(config: dict, studies: Mapping[str, ModuleType]) -> dict:
    """The configured loss variants plus those the enabled studies derive (e.g. a tau sweep)."""
    out = dict(config["losses"])
    for name in config["studies"]:
        for variant, entry in studies[name].loss_variants(config).items():
            out.setdefault(variant, entry)
    return out


def all_runs(config: dict, studies: Mapping[str, ModuleType]):
    """Every run (dataset, recipe, arch, loss, seed) any enabled study needs, each once."""
    return union_runs(studies[name].runs(config) for name in config["studies"])


def checked_configfile(path: Path | str) -> Path:
    """``path`` if it holds a YAML mapping; else :class:`ConfigError` in one sentence naming the
    file (and the line of a YAML syntax error)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"config error: cannot read {path} ({err.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config error: {path} is not a UTF-8 text (YAML) file") from None
    try:
        data = safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        what = getattr(err, "problem", None) or "not valid YAML"
        raise ConfigError(f"config error: {path}{where}: {what}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config error: {path} is empty or not a YAML mapping of keys")
    return path
