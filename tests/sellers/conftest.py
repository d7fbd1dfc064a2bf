"""Fixtures for the sellers tests: seller personas and a sandbox wired to the app.

Personas: ``seller`` (alice), ``other_seller`` (bob), ``staff_user`` (tests/app_fixtures),
``plain_user`` (signed-in, no seller profile).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from marketplace.platform.embargo import embargo_remaining
from marketplace.platform.oauth import TokenSet, oauth_client_holder
from marketplace.redis_client import redis_client
from sellers import services
from sellers.models import PlatformConnection, Seller
from tests.sandbox_process import SandboxProcess

CLIENT_ID = "test-marketplace"
CLIENT_SECRET = "test-marketplace-secret-0f3c"
PLATFORM_SELLER = "alice-shop"
PLATFORM_SELLER_PASSWORD = "alice-shop-pass"
PLATFORM_SELLER_B = "bob-shop"
CALLBACK_PATH = "/sellers/connection/callback/"
APP_URL = "http://testserver"


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    # PBKDF2 costs ~0.3 s per user; these tests are not about password storage.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def seller(db) -> Seller:
    return services.seller_create(
        username="alice", password="alice-pass-123", display_name="Alice's Shop",
        email="alice@example.com",
    )  # fmt: skip


@pytest.fixture
def other_seller(db) -> Seller:
    return services.seller_create(
        username="bob", password="bob-pass-123", display_name="Bob's Shop",
        email="bob@example.com",
    )  # fmt: skip


@pytest.fixture
def plain_user(db):
    return get_user_model().objects.create_user(username="carol", password="carol-pass-123")


@pytest.fixture
def seller_client(seller: Seller) -> Client:
    client = Client()
    client.force_login(seller.user)
    return client


@dataclass
class Platform:
    """The sandbox, registered for this app, with the app's settings pointing at it."""

    sandbox: SandboxProcess
    redirect_url: str

    def mint_code(self, seller: str = PLATFORM_SELLER) -> str:
        return self.sandbox.mint_code(CLIENT_ID, seller, self.redirect_url)

    def counters(self) -> dict:
        return self.sandbox.state()["counters"]

    def refresh_requests(self) -> int:
        return self.counters()["token_requests"].get("refresh_token", 0)


def embargo_clear(settings) -> None:
    """No wait left over from an earlier test's 429/503: Redis outlives its transaction."""
    if settings.REDIS_URL:
        for key in redis_client().scan_iter("embargo:*"):
            redis_client().delete(key)


def token_calls_wait_out() -> None:
    """Sleep out the wait a 429 or 503 of the token endpoint asked for: the token calls
    honour it (the sandbox's faults ask for 1 s)."""
    time.sleep(embargo_remaining(holder=oauth_client_holder(CLIENT_ID)))


def platform_setup(sandbox: SandboxProcess, settings, redirect_url: str) -> Platform:
    embargo_clear(settings)
    sandbox.reset()
    sandbox.register_client(CLIENT_ID, CLIENT_SECRET, redirect_url, name="Test Marketplace")
    sandbox.create_seller(PLATFORM_SELLER, PLATFORM_SELLER_PASSWORD, name="Alice")
    sandbox.create_seller(PLATFORM_SELLER_B, "bob-shop-pass", name="Bob")
    settings.PLATFORM_BASE_URL = sandbox.api_url
    settings.PLATFORM_OAUTH_BASE_URL = sandbox.api_url
    settings.PLATFORM_CLIENT_ID = CLIENT_ID
    settings.PLATFORM_CLIENT_SECRET = CLIENT_SECRET
    settings.PLATFORM_REDIRECT_URL = redirect_url
    return Platform(sandbox=sandbox, redirect_url=redirect_url)


@pytest.fixture
def platform(sandbox: SandboxProcess, settings) -> Platform:
    """For Django-test-client tests: the callback URL is on http://testserver."""
    return platform_setup(sandbox, settings, APP_URL + CALLBACK_PATH)


def connect_via_sandbox(
    platform: Platform, seller: Seller, who: str = PLATFORM_SELLER
) -> PlatformConnection:
    """A real grant from the sandbox stored as the seller's connection (skips the browser)."""
    issued = platform.sandbox.mint_tokens(CLIENT_ID, who)
    return services.connection_grant_store(
        seller=seller,
        tokens=TokenSet(
            access_token=issued["access_token"],
            refresh_token=issued["refresh_token"],
            expires_in=issued["expires_in"],
        ),
        actor=seller.user,
    )
