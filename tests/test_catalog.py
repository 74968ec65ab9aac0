"""What the Snakemake ecosystem reads: the catalog's files, the container path, the test config.

* ``config/README.md`` and the container recipes ``workflow/Dockerfile`` / ``workflow/apptainer.def``
  are what ``workflow/catalog.py`` generates now (the recipes by ``snakemake --containerize``);
* under ``--sdm conda apptainer`` and ``--sdm apptainer`` every job of the catalog's test config
  runs in the configured image, and every job that runs code activates an env the recipe builds.
  Snakemake's dry run prints no job's container and, on a machine without apptainer, refuses to
  plan at all ("The apptainer or singularity command has to be available ..."); the DAG is read
  through Snakemake's API instead (``python3 workflow/catalog.py --plan``), and the dry run
  itself is run with a stand-in ``apptainer`` that answers only ``--version`` (it is asked
  nothing else: a local image is not pulled in a dry run);
* the SLURM-with-Apptainer profile is the SLURM profile plus the container settings;
* ``.snakemake-workflow-catalog.yml`` says what the catalog expects.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

import catalog  # noqa: E402  (workflow/catalog.py)

TEST_CONFIG = ".test/config/config.yaml"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def test_config_readme_is_generated_from_the_schemas():
    text = catalog.config_readme(ROOT)
    assert (ROOT / "config/README.md").read_text() == text, (
        "config/README.md is stale: python3 workflow/catalog.py --write"
    )
    for path in sorted((ROOT / "config").glob("*.yaml")):
        assert f"### `config/{path.name}`" in text
        assert catalog.header_comment(path).splitlines()[0] in text
    for key in ("`data.dataset`", "`recipes.<name>.epochs`", "`container`", "`kang.recipe`"):
        assert f"| {key} |" in text, key
    assert '| `numerics` | one of `pinned`, `native` | `"pinned"` |' in text


def test_schema_rows_reach_every_nested_key():
    schema = {
        "properties": {
            "a": {"type": "integer", "default": 1, "description": "A | B."},
            "m": {
                "type": "object",
                "additionalProperties": {"properties": {"x": {"enum": ["p", "q"]}}},
            },
        }
    }
    assert catalog.schema_rows(schema) == [
        ("a", "integer", "`1`", "A | B."),
        ("m", "object", "", ""),
        ("m.<name>.x", "one of `p`, `q`", "", ""),
    ]


@pytest.mark.slow
def test_container_recipes_are_what_snakemake_containerize_prints():
    for path, fmt in (
        ("workflow/Dockerfile", "dockerfile"),
        ("workflow/apptainer.def", "apptainer"),
    ):
        assert (ROOT / path).read_text() == catalog.containerize(ROOT, fmt), (
            f"{path} does not match the envs: python3 workflow/catalog.py --write"
        )
    recipe = (ROOT / "workflow/Dockerfile").read_text()
    sources = set(re.findall(r"^#   source: (\S+)$", recipe, flags=re.M))
    assert sources == {p.relative_to(ROOT).as_posix() for p in (ROOT / "envs").glob("*.yaml")}


def _plan(*sdm: str, configfiles=(TEST_CONFIG,)) -> list[dict]:
    proc = subprocess.run(
        [sys.executable, "workflow/catalog.py", "--plan", "--sdm", *sdm, "--configfile"]
        + [str(c) for c in configfiles],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_every_job_runs_in_the_image_with_an_env_it_holds():
    recipe = (ROOT / "workflow/Dockerfile").read_text()
    built = set(re.findall(r"^#   source: (\S+)$", recipe, flags=re.M))
    jobs = _plan("conda", "apptainer")
    assert len(jobs) > 50
    for job in jobs:
        assert (job["container"], job["containerized"]) == ("softmax-ood.sif", True), job
        if job["rule"] != "all":  # the target rule runs nothing
            env = Path(job["conda"]).resolve().relative_to(ROOT).as_posix()
            assert env in built, job


@pytest.mark.slow
def test_the_image_is_a_config_value(tmp_path):
    overlay = tmp_path / "image.yaml"
    overlay.write_text("container: oras://registry.example/softmax-ood:1\n")
    jobs = _plan("apptainer", configfiles=(TEST_CONFIG, overlay))
    assert {j["container"] for j in jobs} == {"oras://registry.example/softmax-ood:1"}


@pytest.mark.slow
def test_dry_run_under_apptainer_plans_every_job(tmp_path):
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    stand_in = bin_dir / "apptainer"
    stand_in.write_text(
        f'#!/bin/sh\necho "$*" >> {calls}\n'
        '[ "$1" = "--version" ] && echo "apptainer version 1.3.4" && exit 0\nexit 1\n'
    )
    stand_in.chmod(0o755)
    env = {**ENV, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "--forceall",
            "--sdm",
            "apptainer",
            "--configfile",
            TEST_CONFIG,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    total = int(re.search(r"^total\s+(\d+)$", out, flags=re.M).group(1))
    assert total == len(_plan("apptainer"))
    assert calls.read_text().split("\n")[:-1] == ["--version"]  # nothing ran in a container


def test_slurm_apptainer_profile_is_the_slurm_profile_plus_the_image():
    slurm = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
    both = yaml.safe_load((ROOT / "profiles/slurm-apptainer/config.yaml").read_text())
    extra = {k: v for k, v in both.items() if k not in slurm}
    assert {k: both[k] for k in slurm} == slurm
    assert extra == {"software-deployment-method": ["conda", "apptainer"], "apptainer-args": "--nv"}


def test_catalog_metadata_and_test_config():
    meta = yaml.safe_load((ROOT / ".snakemake-workflow-catalog.yml").read_text())["usage"]
    assert set(meta) == {"mandatory-flags", "software-stack-deployment"}
    assert set(meta["mandatory-flags"]) == {"desc", "flags"}
    assert meta["software-stack-deployment"] == {
        "conda": False,  # the envs lack packages jobs import (see the file)
        "apptainer": False,  # the image's base Python lacks the packages
        "apptainer+conda": False,
        "report": True,
    }
    test_config = ROOT / TEST_CONFIG
    assert test_config.is_symlink()
    assert test_config.resolve() == (ROOT / "config/smoke.yaml").resolve()
