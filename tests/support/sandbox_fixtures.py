"""Pytest fixtures for the platform sandbox (registered in tests/conftest.py).

``sandbox``: one sandbox process for the whole test session.
``clean_sandbox``: the same process, reset before the test (use it, or call
``sandbox.reset()`` yourself, so tests never see each other's orders, grants or faults).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.sandbox_process import SandboxProcess


@pytest.fixture(scope="session")
def sandbox() -> Iterator[SandboxProcess]:
    process = SandboxProcess().start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def clean_sandbox(sandbox: SandboxProcess) -> SandboxProcess:
    sandbox.reset()
    return sandbox
