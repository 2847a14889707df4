"""The synth tests' generated roots, each built once per run (a plugin: `pytest_plugins = ["synth_fixtures"]`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from synth_corpus import REAL

from measure import synth


@pytest.fixture(scope="session")
def mixed_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mixed") / "projects"
    synth.generate(root, seed=11)
    return root


@pytest.fixture(scope="session")
def mixed_stats(mixed_root) -> dict:
    return synth.corpus_stats(mixed_root)


@pytest.fixture(scope="session")
def real_stats() -> dict:
    return synth.corpus_stats(REAL)


@pytest.fixture(scope="session")
def s840_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("s840") / "projects"
    synth.generate(root, seed=840, shape="s840")
    return root
