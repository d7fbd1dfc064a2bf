"""Fixtures shared by the app's tests (registered in tests/conftest.py): the personas, the
sandbox wired to the app, eager Celery tasks and a real Celery worker.

Personas (built by tests/support/factories.py; each password is ``password_of(username)``):
``staff_user`` (staff), ``seller`` (alice, "Alice's Shop"), ``other_seller`` (bob, "Bob's
Shop"), ``plain_user`` (carol: signed in, no seller profile); ``staff_client`` and
``seller_client`` are Django test clients signed in as them.

``platform``: the session's sandbox, reset, with our OAuth client and two platform sellers
(``PLATFORM_SELLER`` for alice, ``PLATFORM_SELLER_B`` for bob); the app's settings point at
it. The callback URL is ``platform_redirect_url``: http://testserver for Django's test
client; browser tests override that fixture with the live server's address.
``connected_seller``: ``seller`` holding a grant the sandbox really issued.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from marketplace.platform import oauth
from marketplace.platform.oauth import TokenSet
from sellers import services as seller_services
from sellers.models import PlatformConnection, Seller
from tests.support.factories import SellerFactory, StaffUserFactory, UserFactory
from tests.support.sandbox_process import SandboxProcess

CLIENT_ID = "test-marketplace"
CLIENT_SECRET = "test-marketplace-secret-0f3c"
APP_URL = "http://testserver"
CALLBACK_PATH = "/sellers/connection/callback/"
REDIRECT_URL = APP_URL + CALLBACK_PATH
APP_SELLER = "alice"  # the seller's username in the app (intake bodies name it)
PLATFORM_SELLER = "alice-shop"
PLATFORM_SELLER_PASSWORD = "alice-shop-pass"
PLATFORM_SELLER_B = "bob-shop"


# --- personas ------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    # PBKDF2 costs ~0.3 s per user; only the hasher's speed changes, not what is checked.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def staff_user(db: Any) -> Any:
    return StaffUserFactory()


@pytest.fixture
def seller(db: Any) -> Seller:
    return SellerFactory(username=APP_SELLER, display_name="Alice's Shop")


@pytest.fixture
def other_seller(db: Any) -> Seller:
    return SellerFactory(username="bob", display_name="Bob's Shop")


@pytest.fixture
def plain_user(db: Any) -> Any:
    return UserFactory(username="carol")


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page_text(response: Any, status: int = 200) -> str:
    """The page's text, once its status is the expected one (a 404 page contains no secret
    and no seller's name either: a "not in" assertion alone passes on it)."""
    assert response.status_code == status, (
        f"{response.request['REQUEST_METHOD']} {response.request['PATH_INFO']} answered "
        f"{response.status_code}, expected {status}"
    )
    return response.content.decode()


@pytest.fixture
def staff_client(staff_user: Any) -> Client:
    return signed_in(staff_user)


@pytest.fixture
def seller_client(seller: Seller) -> Client:
    return signed_in(seller.user)


# --- the platform (the sandbox process) -----------------------------------------------------


@dataclass
class Platform:
    """The sandbox, registered for this app, with the app's settings pointing at it."""

    sandbox: SandboxProcess
    redirect_url: str

    def mint_code(self, who: str = PLATFORM_SELLER) -> str:
        """An authorization code, as the platform seller's Approve would give it."""
        return self.sandbox.mint_code(CLIENT_ID, who, self.redirect_url)

    def connect(self, seller: Seller, who: str = PLATFORM_SELLER) -> PlatformConnection:
        """A grant the sandbox issued, stored as the seller's connection (no browser step)."""
        issued = self.sandbox.mint_tokens(CLIENT_ID, who)
        return seller_services.connection_grant_store(
            seller=seller,
            tokens=TokenSet(
                access_token=issued["access_token"],
                refresh_token=issued["refresh_token"],
                expires_in=issued["expires_in"],
            ),
            actor=seller.user,
        )

    def reconnect(self, seller: Seller, who: str = PLATFORM_SELLER) -> PlatformConnection:
        """A code minted at the sandbox and exchanged by the app's own OAuth client."""
        tokens = oauth.token_exchange_code(code=self.mint_code(who), seller_id=seller.id)
        return seller_services.connection_grant_store(seller=seller, tokens=tokens, actor=None)

    def order(self, number: str) -> dict[str, Any]:
        return self.sandbox.order(number)

    def requests(self, **params: Any) -> list[dict[str, Any]]:
        return self.sandbox.requests_log(**params)

    def counters(self) -> dict:
        return self.sandbox.state()["counters"]

    def refresh_requests(self) -> int:
        return self.counters()["token_requests"].get("refresh_token", 0)


def _embargoes_forget(settings: Any) -> None:
    # No wait left over from an earlier test's 429 (this worktree's own Redis db).
    if settings.REDIS_URL:
        from marketplace.redis_client import redis_client

        for key in redis_client().scan_iter("embargo:*"):
            redis_client().delete(key)


def token_calls_wait_out() -> None:
    """Sleep out the wait a 429 or 503 of the token endpoint asked for: the token calls
    honour it (the sandbox's faults ask for 1 s)."""
    from marketplace.platform.embargo import embargo_remaining

    time.sleep(embargo_remaining(holder=oauth.oauth_client_holder(CLIENT_ID)))


@pytest.fixture
def platform_redirect_url() -> str:
    """The callback the sandbox accepts; browser tests override it with the live server's."""
    return REDIRECT_URL


@pytest.fixture
def platform(sandbox: SandboxProcess, settings: Any, platform_redirect_url: str) -> Platform:
    """A clean sandbox with our client and two platform sellers; settings point at it."""
    sandbox.reset()
    sandbox.register_client(
        CLIENT_ID, CLIENT_SECRET, platform_redirect_url, name="Test Marketplace"
    )
    sandbox.create_seller(PLATFORM_SELLER, PLATFORM_SELLER_PASSWORD, name="Alice")
    sandbox.create_seller(PLATFORM_SELLER_B, "bob-shop-pass", name="Bob")
    settings.PLATFORM_BASE_URL = sandbox.api_url
    settings.PLATFORM_OAUTH_BASE_URL = sandbox.api_url
    settings.PLATFORM_CLIENT_ID = CLIENT_ID
    settings.PLATFORM_CLIENT_SECRET = CLIENT_SECRET
    settings.PLATFORM_REDIRECT_URL = platform_redirect_url
    # Small delays so retries and backoff finish within a test.
    settings.PUSH_BACKOFF_BASE = 0.05
    settings.PUSH_BACKOFF_CAP = 0.5
    settings.PUSH_RATE_LIMIT_DEFAULT_WAIT = 1.0
    settings.PUSH_SWEEP_GRACE_SECONDS = 0.0
    settings.PLATFORM_LIST_RATE_PER_SECOND = 50.0
    _embargoes_forget(settings)
    return Platform(sandbox=sandbox, redirect_url=platform_redirect_url)


@pytest.fixture
def connected_seller(platform: Platform, seller: Seller) -> Seller:
    """``seller`` with a live connection: a real code minted at the sandbox and exchanged."""
    platform.reconnect(seller)
    return seller


# --- Celery ---------------------------------------------------------------------------------


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """Run the real Celery tasks in-process as soon as they are queued (on commit)."""
    from marketplace.celery import app
    from marketplace.orders.services.outbox import PUSH_DOORBELL

    # A test before this one may have rung the push doorbell (Redis) without a drain to
    # clear it: this test's first change would then queue no drain, eager or not.
    PUSH_DOORBELL.clear()
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = previous


@pytest.fixture
def celery_worker_thread(transactional_db: Any) -> Iterator[object]:
    """A real Celery worker (in a thread of this process) on the configured broker.

    It consumes from the real broker (Redis in CI, the filesystem transport
    otherwise) and runs the real tasks against the test database; tests using it need
    a transactional database so the worker's connection sees their rows.
    """
    from celery.contrib.testing.worker import start_worker

    from marketplace.celery import app

    # Tests without a worker leave wake-ups in the broker; a fresh worker must not
    # spend this test's time on another test's stale messages.
    app.control.purge()
    # ... nor find the push doorbell still rung by a test whose drain message was purged.
    from marketplace.orders.services.outbox import PUSH_DOORBELL

    PUSH_DOORBELL.clear()
    with start_worker(
        app, pool="threads", concurrency=2, perform_ping_check=False, shutdown_timeout=30
    ) as worker:
        yield worker
