"""Every rule's conda env pins exactly the versions requirements.txt pins."""

from pathlib import Path

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
    import re

    for smk in sorted((ROOT / "rules").glob("*.smk")):
        text = smk.read_text()
        for rule in re.split(r"\nrule ", text)[1:]:
            name = rule.split(":", 1)[0]
            assert "\n    log:" in rule, f"{smk.name}: rule {name} has no log"
            env = re.search(r'conda:\n\s+"([^"]+)"', rule)
            assert env, f"{smk.name}: rule {name} has no conda env"
            assert (smk.parent / env.group(1)).resolve().is_file(), env.group(1)
