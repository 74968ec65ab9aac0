"""Config fixtures of the Kang study's tests: the default config with the Kang section (from
``kang_section.yaml``, the snippet of INTEGRATION.md) and the study registered, whether or not the
working tree has been integrated yet."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from softmax_ood.config import validate_config
from softmax_ood.studies.kang import study
from softmax_ood.studies.registry import registered_studies

ROOT = Path(__file__).resolve().parents[5]
SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"
HERE = Path(__file__).resolve().parent
LOSSES = {
    "reward-mse": {
        "loss": "reward_mse",
        "correct_reward": 1.0,
        "wrong_reward": -4.0,
        "abstain_reward": 0.0,
    },
    "gaussian-nll": {"loss": "gaussian_nll"},
}


def studies() -> dict:
    return {**registered_studies(), "kang": study}


def raw_config() -> dict:
    raw = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    section = yaml.safe_load((HERE / "kang_section.yaml").read_text())["kang"]
    raw.setdefault("kang", section)
    for name, entry in LOSSES.items():
        raw["losses"].setdefault(name, entry)
    raw["studies"] = sorted(set(raw.get("studies") or []) | {"kang"})
    return raw


def validated(raw: dict) -> dict:
    return validate_config(copy.deepcopy(raw), SCHEMA, studies())


@pytest.fixture()
def raw():
    return raw_config()


@pytest.fixture()
def cfg():
    return validated(raw_config())
