"""The paper-scale path through Snakemake, against archives in the real formats served from a
loopback HTTP server: download (md5-verified) -> extract -> prepare -> train -> evaluate."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))

from fixtures_archives import (  # noqa: E402
    FileServer,
    make_cifar10_tar_gz,
    make_image_folder_tar_gz,
    make_svhn_mat,
)
from test_workflow import fresh_copy, snakemake  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = tmp_path_factory.mktemp("archives")
    archives = {
        "cifar10": make_cifar10_tar_gz(d / "cifar-10-python.tar.gz")["path"],
        "svhn": make_svhn_mat(d / "test_32x32.mat")["path"],
        "textures": make_image_folder_tar_gz(d / "dtd-r1.0.1.tar.gz", root="dtd/images", n=12)[
            "path"
        ],
    }
    server = FileServer()
    real = yaml.safe_load((ROOT / "config/paper_sources.yaml").read_text())
    entries = []
    for entry in real["sources"]:
        if entry["name"] in archives:
            path = archives[entry["name"]]
            entry = {
                **entry,
                "url": server.add(f"/{entry['filename']}", path.read_bytes()),
                "md5": hashlib.md5(path.read_bytes()).hexdigest(),
                "sha256": None,
            }
        entries.append(entry)
    try:
        yield {**real, "sources": entries}, server
    finally:
        server.close()


def _configs(work: Path, sources: dict, *more: str) -> list[str]:
    (work / "loopback_sources.yaml").write_text(yaml.safe_dump(sources, sort_keys=False))
    override = {
        "data": {"sources": "loopback_sources.yaml", "ood_test": ["svhn", "textures"]},
        "seeds": [0],
        # one epoch on a few hundred images: plumbing only, so the chance guard is off
        "recipes": {
            "paper-sgd": {"epochs": 1, "batch_size": 32, "threads": 2, "chance_margin": None}
        },
        "evaluation": {"batch_size": 64},
    }
    (work / "loopback.yaml").write_text(yaml.safe_dump(override))
    return ["--configfile", "config/paper.yaml", *more, "loopback.yaml"]


def test_paper_config_downloads_prepares_trains_and_evaluates(served, tmp_path):
    sources, server = served
    work = fresh_copy(tmp_path / "repo")
    target = "results/eval/cifar10/paper-sgd/wrn-40-2/ce/seed0/summary.json"
    proc = snakemake(work, target, "--cores", "2", *_configs(work, sources))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    meta = json.loads((work / "data/cifar10/meta.json").read_text())
    assert meta["channels"] == 3 and meta["image_size"] == 32
    assert meta["ood_test"] == ["svhn", "textures"]
    assert meta["sources"]["cifar10"]["url"].startswith("http://127.0.0.1")
    summary = json.loads((work / target).read_text())
    assert {r["ood_set"] for r in summary["ood"]} == {"svhn", "textures", "gaussian"}
    assert 0.0 <= summary["metrics"]["accuracy"] <= 1.0
    assert server.hits["/cifar-10-python.tar.gz"] == 1


def test_wrong_checksum_stops_with_one_sentence_and_keeps_the_other_sources(served, tmp_path):
    sources, _ = served
    bad = json.loads(json.dumps(sources))
    for entry in bad["sources"]:
        if entry["name"] == "svhn":
            entry["md5"] = "0" * 32
    work = fresh_copy(tmp_path / "repo")
    # --keep-going: every source is its own job, so the others still run after one fails
    proc = snakemake(work, "data/cifar10", "--cores", "1", "--keep-going", *_configs(work, bad))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "ERROR softmax_ood: checksum mismatch for test_32x32.mat downloaded from" in out, out
    assert "expected md5 " + "0" * 32 + ", got " in out
    # one job per source: the bad file is not kept, the verified ones are
    assert not (work / "data/raw/test_32x32.mat").exists()
    assert not list((work / "data/raw").glob("*.part")) and not list((work / "data/raw").glob(".*"))
    assert (work / "data/raw/cifar-10-python.tar.gz").is_file()
    assert not (work / "data/cifar10").exists()


def test_editing_one_source_entry_downloads_only_that_source_again(served, tmp_path):
    """Each download job depends on its own entry (params), not on the sources file."""
    import re

    sources, server = served
    work = fresh_copy(tmp_path / "repo")
    files = ["data/raw/cifar-10-python.tar.gz", "data/raw/test_32x32.mat"]
    proc = snakemake(work, *files, "--cores", "2", *_configs(work, sources))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    edited = json.loads(json.dumps(sources))
    for entry in edited["sources"]:
        if entry["name"] == "svhn":
            entry["description"] = entry.get("description", "") + " (edited)"
        if entry["name"] == "places365":  # an entry no job here downloads
            entry["url"] = entry["url"] + "?moved"
    plan = snakemake(work, *files, "-n", "--quiet", "rules", *_configs(work, edited))
    out = plan.stdout + plan.stderr
    assert plan.returncode == 0, out[-3000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", out.split("Job stats:")[1], re.M))
    assert jobs.get("download_source") == "1", out  # svhn only; cifar10 is not fetched again
