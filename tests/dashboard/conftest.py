"""Fixtures for the dashboard and portal tests (tests/portal/conftest.py reuses them).

Personas: ``staff_user`` (tests/app_fixtures), ``seller`` / ``other_seller`` (sellers with
a profile), ``plain_user`` (signed in, no seller profile). ``platform`` wires the app to
the session's sandbox; ``eager_tasks`` runs the real Celery tasks in-process.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from marketplace.platform.oauth import TokenSet
from sellers import services as seller_services
from sellers.models import PlatformConnection, Seller
from tests.sandbox_process import SandboxProcess

CLIENT_ID = "dashboard-test-marketplace"
CLIENT_SECRET = "dashboard-test-secret-5b2a"
REDIRECT_URL = "http://testserver/sellers/connection/callback/"
PLATFORM_SELLER = "alice-shop"
PLATFORM_SELLER_B = "bob-shop"


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    # PBKDF2 costs ~0.3 s per user; these tests are not about password storage.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def seller(db: Any) -> Seller:
    return seller_services.seller_create(
        username="alice", password="alice-pass-123", display_name="Alice's Shop"
    )


@pytest.fixture
def other_seller(db: Any) -> Seller:
    return seller_services.seller_create(
        username="bob", password="bob-pass-123", display_name="Bob's Shop"
    )


@pytest.fixture
def plain_user(db: Any) -> Any:
    return get_user_model().objects.create_user(username="carol", password="carol-pass-123")


@pytest.fixture
def staff_client(staff_user: Any) -> Client:
    client = Client()
    client.force_login(staff_user)
    return client


@pytest.fixture
def seller_client(seller: Seller) -> Client:
    client = Client()
    client.force_login(seller.user)
    return client


@pytest.fixture
def platform(sandbox: SandboxProcess, settings: Any) -> SandboxProcess:
    """A clean sandbox with our client and two platform sellers; settings point at it."""
    sandbox.reset()
    sandbox.register_client(CLIENT_ID, CLIENT_SECRET, REDIRECT_URL, name="Dashboard Test")
    sandbox.create_seller(PLATFORM_SELLER, "alice-shop-pass", name="Alice")
    sandbox.create_seller(PLATFORM_SELLER_B, "bob-shop-pass", name="Bob")
    settings.PLATFORM_BASE_URL = sandbox.api_url
    settings.PLATFORM_OAUTH_BASE_URL = sandbox.api_url
    settings.PLATFORM_CLIENT_ID = CLIENT_ID
    settings.PLATFORM_CLIENT_SECRET = CLIENT_SECRET
    settings.PLATFORM_REDIRECT_URL = REDIRECT_URL
    settings.PUSH_BACKOFF_BASE = 0.05
    settings.PUSH_BACKOFF_CAP = 0.5
    settings.PLATFORM_LIST_RATE_PER_SECOND = 50.0
    return sandbox


def connect(
    sandbox: SandboxProcess, seller: Seller, who: str = PLATFORM_SELLER
) -> PlatformConnection:
    """A real grant from the sandbox stored as the seller's connection (no browser step)."""
    issued = sandbox.mint_tokens(CLIENT_ID, who)
    return seller_services.connection_grant_store(
        seller=seller,
        tokens=TokenSet(
            access_token=issued["access_token"],
            refresh_token=issued["refresh_token"],
            expires_in=issued["expires_in"],
        ),
        actor=seller.user,
    )


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """Run the real Celery tasks in-process as soon as they are queued (on commit)."""
    from marketplace.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = previous
