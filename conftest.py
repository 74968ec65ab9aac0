"""Shared fixtures. Tests run with one torch thread for speed and determinism."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_configure(config):
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass


def pytest_sessionfinish(session, exitstatus):
    # "no tests collected" (exit 5) must never pass for a green run: make it a failure.
    if exitstatus == 5:
        session.exitstatus = 1


@pytest.fixture(scope="session")
def smoke_runs(tmp_path_factory) -> list[Path]:
    """The smoke config run from scratch in a fresh temporary copy (``[run]``; shared by the
    workflow tests and every study package's end-to-end tests; built once per session). Tests
    of byte-identical rebuilds compare it with the golden manifest (``e2e.differs_from_golden``)."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from e2e import smoke_once

    return smoke_once(tmp_path_factory)


@pytest.fixture(scope="session")
def embedded_data(tmp_path_factory) -> Path:
    """A small embedded dataset (digits + OOD crops), built once per test session."""
    from softmax_ood.data import make_embedded_dataset

    out = tmp_path_factory.mktemp("data") / "digits"
    make_embedded_dataset(
        out,
        image_size=8,
        seed=0,
        val_fraction=0.2,
        test_fraction=0.2,
        ood_size=60,
        ood_test=["textures", "photos", "characters", "gaussian", "uniform"],
        ood_val=["gaussian_val"],
    )
    return out


@pytest.fixture
def server():
    """A loopback HTTP server (tests/fixtures_archives.FileServer) for the download tests."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from fixtures_archives import FileServer

    srv = FileServer()
    try:
        yield srv
    finally:
        srv.close()
