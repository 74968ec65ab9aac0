"""Every rule's conda env pins exactly the versions requirements.txt pins, and holds every
third-party module its rule's code imports."""

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _pins(lines):
    out = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==")
            out[name.strip().lower()] = version.strip()
    return out


def test_env_pins_match_requirements():
    req = _pins((ROOT / "requirements.txt").read_text().splitlines())
    envs = sorted((ROOT / "envs").glob("*.yaml"))
    assert envs
    for env in envs:
        spec = yaml.safe_load(env.read_text())
        pip = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict) and "pip" in d)
        pins = _pins(pip)
        assert pins, env
        for name, version in pins.items():
            assert req.get(name) == version, (
                f"{env.name}: {name}=={version}, requirements: {req.get(name)}"
            )
        assert "python=3.11" in spec["dependencies"]


def test_every_rule_names_an_existing_env_and_a_log():
    for smk in sorted((ROOT / "rules").glob("*.smk")):
        text = smk.read_text()
        for rule in re.split(r"\nrule ", text)[1:]:
            name = rule.split(":", 1)[0]
            assert "\n    log:" in rule, f"{smk.name}: rule {name} has no log"
            env = re.search(r'conda:\n\s+"([^"]+)"', rule)
            assert env, f"{smk.name}: rule {name} has no conda env"
            assert (smk.parent / env.group(1)).resolve().is_file(), env.group(1)


# ------------------------------------------------ every rule's env holds what its code imports

# Snakefile -> JSON {rule: {"conda": env file, "files": [script, notebook inputs], "code": [.py
# inputs: the code inputs, with the study modules a shared rule calls]}}, run in a
# process of its own (the Snakefile changes sys.path and the environment of its process)
_RULES = r"""
import json, sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, ResourceSettings
root = Path(sys.argv[1])
with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
    wf = api.workflow(
        resource_settings=ResourceSettings(cores=1),
        config_settings=ConfigSettings(configfiles=[]),
        snakefile=root / "Snakefile",
        workdir=root,
    )
    wf.dag(DAGSettings())
    out = {}
    for rule in wf._workflow.rules:
        if rule.conda_env is None:
            continue
        base = Path(rule.snakefile).parent
        files = [str((base / rule.script).resolve())] if rule.script else []
        code = []
        for item in rule.input:
            if isinstance(item, str) and item.endswith((".py", ".ipynb")) and "{" not in item:
                (files if item.endswith(".ipynb") else code).append(str((root / item).resolve()))
        out[rule.name] = {
            "conda": str((base / rule.conda_env).resolve()),
            "files": files,
            "code": code,
        }
print(json.dumps(out))
"""

#: importable without being in an env: Snakemake's script runner puts its own package on the
#: path of every script it starts (``from snakemake ...`` in a script)
RUNNER_PROVIDED = {"snakemake"}

#: (env, distribution) a rule's code imports only inside functions that its jobs never call,
#: so the env leaves it out, and why
LAZY = {
    ("report.yaml", "torch"): "the analysis jobs read frames; the project modules they reach "
    "import torch only inside the training, evaluation and data-building functions "
    "(tests/test_job_imports.py keeps torch out of their import chains)",
    ("report.yaml", "scikit-learn"): "only softmax_ood.data's data-building functions and the "
    "discriminator's fit import it; the analysis jobs read the frames those jobs wrote",
    ("report.yaml", "scikit-image"): "only softmax_ood.data's data-building functions import it",
    ("report.yaml", "psutil"): "softmax_ood.errors imports it in the lock check the Snakefile "
    "runs in Snakemake's own process (psutil is a dependency of Snakemake), never in a job",
    ("torch.yaml", "psutil"): "as for report.yaml: the Snakefile's lock check, not a job",
}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _rules() -> dict:
    import json
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", _RULES, str(ROOT)], capture_output=True, text=True, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _module_of(path: Path) -> str | None:
    try:
        rel = path.relative_to(ROOT / "src").with_suffix("")
    except ValueError:
        return None
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


def _third_party(names) -> set[str]:
    import sys

    from softmax_ood.codedeps import PACKAGE

    tops = {n.split(".")[0] for n in names}
    return {t for t in tops if t and t not in sys.stdlib_module_names} - {PACKAGE, "__future__"}


def _third_party_imports(files: list[str], code: list[str]) -> dict[str, tuple[str, bool]]:
    """``{top-level import: (first file importing it, eager)}`` over ``files`` (script and
    notebooks), the rule's ``code`` inputs and every project module they reach, transitively
    (imports anywhere in a file). ``eager``: the import runs when the job starts (module level
    of a file the script or notebook reaches through module-level imports only); else it may
    run only when the function holding it is called."""
    from softmax_ood.codedeps import (
        PACKAGE,
        code_inputs,
        eager_imports,
        imported_modules,
        module_file,
    )

    src, found = ROOT / "src", {}
    closure = {str(Path(f).resolve()) for f in [*files, *code]}
    for f in files:
        closure.update(str((ROOT / p).resolve()) for p in code_inputs(f, src))
    # the eager closure: module-level imports, from the scripts (the notebooks run every cell)
    eager, todo = set(), [Path(f) for f in files]
    while todo:
        path = todo.pop()
        if str(path) in eager:
            continue
        eager.add(str(path))
        names = (imported_modules if path.suffix == ".ipynb" else eager_imports)(
            path, _module_of(path)
        )
        for name in names:
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                parts = name.split(".")
                for i in range(1, len(parts) + 1):
                    f = module_file(".".join(parts[:i]), src)
                    if f is not None:
                        todo.append(f.resolve())
        for top in _third_party(names):
            found[top] = (str(path.relative_to(ROOT)), True)
    for f in sorted(closure):
        path = Path(f)
        for top in _third_party(imported_modules(path, _module_of(path))):
            found.setdefault(top, (str(path.relative_to(ROOT)), False))
    return found


def _env_closure(env: Path) -> set[str]:
    """The distributions ``env`` lists and, from their installed metadata, everything they
    require (pip installs those with them), normalised names."""
    from importlib import metadata

    from packaging.requirements import Requirement

    spec = yaml.safe_load(env.read_text())
    pip = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict) and "pip" in d)
    todo = [_norm(line.split("==")[0].strip()) for line in pip]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(_norm(req.name))
    return seen


@pytest.mark.slow
def test_every_rules_env_holds_the_distributions_its_code_imports():
    """Issue 47: a job run under ``--sdm conda`` (or in the generated container) finds every
    third-party module its script and the project modules it reaches import, in the env its
    rule names (listed there, or installed by pip with a listed distribution). An import that
    runs only inside a function the job's code can reach but does not call (the analysis
    jobs keep torch out, tests/test_job_imports.py) is allowed only where :data:`LAZY` says
    why; one that runs when the job starts never is."""
    from importlib import metadata

    dists = {k: [_norm(d) for d in v] for k, v in metadata.packages_distributions().items()}
    envs: dict[str, set[str]] = {}
    missing, used_lazy = [], set()
    for rule, info in sorted(_rules().items()):
        env = Path(info["conda"])
        have = envs.setdefault(env.name, _env_closure(env))
        for top, (where, eager) in sorted(
            _third_party_imports(info["files"], info["code"]).items()
        ):
            if top in RUNNER_PROVIDED:
                continue
            need = dists.get(top)
            assert need, f"{where} imports {top!r}, which no installed distribution provides"
            if set(need) & have:
                continue
            if not eager and (env.name, need[0]) in LAZY:
                used_lazy.add((env.name, need[0]))
                continue
            when = "at start" if eager else "inside a function"
            missing.append(f"{rule} ({env.name}): {need[0]} (import {top} {when}, {where})")
    assert not missing, "rules whose env lacks what their code imports: " + "; ".join(missing)
    assert used_lazy == set(LAZY), f"LAZY lists pairs no rule needs: {set(LAZY) - used_lazy}"
