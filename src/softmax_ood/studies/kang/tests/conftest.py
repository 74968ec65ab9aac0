"""Config fixtures of the Kang study's tests: the shipped default config (with its ``kang:``
section and loss entries), validated with every registered study."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from softmax_ood.config import validate_config
from softmax_ood.studies.registry import registered_studies

ROOT = Path(__file__).resolve().parents[5]
SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"


def raw_config() -> dict:
    return yaml.safe_load((ROOT / "config/default.yaml").read_text())


def validated(raw: dict) -> dict:
    return validate_config(copy.deepcopy(raw), SCHEMA, registered_studies())


@pytest.fixture()
def raw():
    return raw_config()


@pytest.fixture()
def cfg():
    return validated(raw_config())
