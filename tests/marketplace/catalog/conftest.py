"""Fixtures of the catalog tests: feed storage in a temporary folder, a helper that stores a
file as a received run, and the sandbox with a product database (personas, ``platform`` and
``eager_tasks``: tests/support/app_fixtures.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.base import ContentFile

from marketplace.catalog.feeds.ingest import feed_storage
from marketplace.catalog.models import FeedRun
from sellers.models import Seller
from tests.marketplace.catalog.platform import CatalogWorld, catalog_world_create
from tests.support.sandbox_process import SandboxProcess


@pytest.fixture(autouse=True)
def feed_folder(settings: Any, tmp_path: Path) -> Path:
    # Django's setting_changed handler drops the cached storages, so this counts.
    folder = tmp_path / "feeds"
    settings.STORAGES = {
        **settings.STORAGES,
        "catalog_feeds": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(folder)},
        },
    }
    return folder


@pytest.fixture
def received_run(seller: Seller) -> Callable[..., FeedRun]:
    def make(data: bytes, *, compression: str = "", delimiter: str = "comma") -> FeedRun:
        name = feed_storage().save(f"{seller.pk}/test.csv", ContentFile(data))
        return FeedRun.objects.create(
            seller=seller,
            file_path=name,
            file_bytes=len(data),
            compression=compression,
            delimiter=delimiter,
        )

    return make


@pytest.fixture
def reading() -> str:
    """The reading the sandbox takes of every point where the documents are silent (the
    contract's last table): "A" here; the end-to-end modules parametrize it over both
    (``tests.marketplace.catalog.platform.READINGS``)."""
    return "A"


@pytest.fixture
def no_violations(sandbox: SandboxProcess) -> Iterator[None]:
    """After the test: the app broke none of the contract's rules the sandbox checks."""
    yield
    violations = sandbox.violations()
    assert violations["total"] == 0, violations


@pytest.fixture
def world(sandbox: SandboxProcess, settings: Any, live_server: Any, reading: str) -> CatalogWorld:
    """The sandbox with the seller's platform account and database, under ``reading``; the
    app's base URL is the live server's, so the platform's export delivers to it and its
    import reads the listing-status file from it."""
    settings.APP_BASE_URL = live_server.url
    world = catalog_world_create(sandbox, settings)
    assert set(sandbox.readings_all(reading).values()) == {reading}
    return world
