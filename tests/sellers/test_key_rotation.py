"""Keys (issue 30.5): ``rotate_token_keys`` re-encrypts every ciphertext the app holds (the
sellers' connections and the catalog's API token, found by introspection) and reports
counts; every page answers after the old key is removed; an undecryptable token moves a
seller to "needs re-authorization" (e-mailed once, no retry loop) and the API access to
"needs sign-in", with no 500. And a new encrypted field cannot escape the rotation."""

from __future__ import annotations

import ast
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.apps import apps
from django.conf import settings
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone

from marketplace.catalog.models import PlatformApiAccess
from sellers import key_rotation, services, tasks, vault
from sellers.errors import ReauthorizationRequired
from sellers.models import ConnectionEvent, PlatformConnection, Seller
from sellers.signals import ciphertext_lost
from tests.support.factories import PlatformConnectionFactory

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]
OLD_KEY = settings.TOKEN_ENCRYPTION_KEYS[0]
NEW_KEY = Fernet.generate_key().decode()
API_TOKEN = "api-token-0123456789"


@pytest.fixture(autouse=True)
def keys_back(settings: object) -> None:
    """Each test sets TOKEN_ENCRYPTION_KEYS as it needs; pytest-django restores it."""


@pytest.fixture
def api_access() -> PlatformApiAccess:
    return PlatformApiAccess.objects.create(
        pk=1,
        state=PlatformApiAccess.State.ACTIVE,
        username="catalog-api",
        token_name="marketplace-test",
        token_ciphertext=vault.token_encrypt(API_TOKEN),
        signed_in_at=timezone.now(),
    )


def pages_answer(staff_client: Client, seller_client: Client) -> str:
    """Every page that shows a token's state answers; returns the API-access page."""
    api_page = staff_client.get("/dashboard/catalog/api-access/")
    assert api_page.status_code == 200
    assert seller_client.get("/sellers/connection/").status_code == 200
    assert seller_client.get("/sellers/").status_code == 200
    assert staff_client.get("/dashboard/").status_code == 200
    assert staff_client.get("/admin/sellers/platformconnection/").status_code == 200
    connection = PlatformConnection.objects.first()
    assert connection is not None
    change = staff_client.get(f"/admin/sellers/platformconnection/{connection.pk}/change/")
    assert change.status_code == 200
    return api_page.content.decode()


def test_rotation_reencrypts_every_ciphertext_reports_counts_and_the_old_key_can_go(
    seller: Seller,
    other_seller: Seller,
    api_access: PlatformApiAccess,
    settings: object,
    staff_client: Client,
    seller_client: Client,
    capsys: pytest.CaptureFixture,
) -> None:
    connection = PlatformConnectionFactory(seller=seller)
    access_token, refresh_token = connection.access_token, connection.refresh_token
    PlatformConnectionFactory(seller=other_seller, not_connected=True)  # nothing to rotate

    # When the new key goes first and the rotation runs (in batches of one row)
    settings.TOKEN_ENCRYPTION_KEYS = [NEW_KEY, OLD_KEY]  # type: ignore[attr-defined]
    call_command("rotate_token_keys", "--batch-size", "1")

    # Then every encrypted field is counted, and each ciphertext re-encrypted once
    out = capsys.readouterr().out
    assert (
        "sellers.PlatformConnection.access_token_ciphertext: 1 held, 1 re-encrypted, "
        "0 already current, 0 undecryptable" in out
    )
    assert "sellers.PlatformConnection.refresh_token_ciphertext: 1 held, 1 re-encrypted" in out
    assert "catalog.PlatformApiAccess.token_ciphertext: 1 held, 1 re-encrypted" in out
    assert "Re-encrypted 3 ciphertext(s)." in out
    assert ConnectionEvent.objects.filter(kind="key_rotated").count() == 1
    call_command("rotate_token_keys")  # idempotent
    again = capsys.readouterr().out
    assert "Re-encrypted 0 ciphertext(s)." in again
    assert "catalog.PlatformApiAccess.token_ciphertext: 1 held, 0 re-encrypted, 1 already" in again

    # When the old key is removed: every token reads, every page answers
    settings.TOKEN_ENCRYPTION_KEYS = [NEW_KEY]  # type: ignore[attr-defined]
    connection.refresh_from_db()
    assert (connection.access_token, connection.refresh_token) == (access_token, refresh_token)
    api_access.refresh_from_db()
    assert api_access.token == API_TOKEN
    page = pages_answer(staff_client, seller_client)
    assert vault.token_fingerprint(API_TOKEN) in page
    assert PlatformApiAccess.objects.get().state == PlatformApiAccess.State.ACTIVE
    assert PlatformConnection.objects.get(pk=connection.pk).state == "connected"


def test_a_lost_key_moves_the_seller_to_reauthorization_once_and_the_access_to_sign_in(
    seller: Seller,
    api_access: PlatformApiAccess,
    settings: object,
    staff_client: Client,
    seller_client: Client,
    django_capture_on_commit_callbacks: object,
) -> None:
    connection = PlatformConnectionFactory(seller=seller)
    PlatformConnection.objects.filter(pk=connection.pk).update(
        access_token_expires_at=timezone.now() - timedelta(minutes=1)
    )
    # Given the key lost: the configured key is another one
    settings.TOKEN_ENCRYPTION_KEYS = [NEW_KEY]  # type: ignore[attr-defined]

    # Then every page answers; the API access reads "needs sign-in"
    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        page = pages_answer(staff_client, seller_client)
    assert "Needs sign-in" in page
    access = PlatformApiAccess.objects.get()
    assert (access.state, access.token_ciphertext) == ("needs_sign_in", "")
    assert "cannot be decrypted" in access.last_error

    # When the refresh sweep's task meets the connection: needs re-authorization, the
    # seller e-mailed once, and the task ends (no retry)
    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        tasks.connection_refresh_task.apply(args=(connection.pk,)).get()
    connection.refresh_from_db()
    assert connection.state == PlatformConnection.State.NEEDS_REAUTH
    assert (connection.access_token_ciphertext, connection.refresh_token_ciphertext) == ("", "")
    seller_mails = [m for m in mail.outbox if seller.user.email in m.to]
    assert len(seller_mails) == 1
    assert seller_mails[0].subject == "Action needed: reconnect your platform account"

    # ... and nothing sends it again: another refresh, or access token, says so at once
    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        with pytest.raises(ReauthorizationRequired):
            services.connection_refresh(connection_id=connection.pk)
        tasks.connection_refresh_task.apply(args=(connection.pk,)).get()
    assert len([m for m in mail.outbox if seller.user.email in m.to]) == 1
    pages_answer(staff_client, seller_client)


def test_the_rotation_reports_an_undecryptable_token_and_moves_it_to_a_state(
    seller: Seller,
    api_access: PlatformApiAccess,
    settings: object,
    capsys: pytest.CaptureFixture,
    django_capture_on_commit_callbacks: object,
) -> None:
    connection = PlatformConnectionFactory(seller=seller)
    settings.TOKEN_ENCRYPTION_KEYS = [NEW_KEY]  # type: ignore[attr-defined]

    with (
        django_capture_on_commit_callbacks(execute=True),  # type: ignore[operator]
        pytest.raises(CommandError, match="3 ciphertext"),
    ):
        call_command("rotate_token_keys")

    out = capsys.readouterr().out
    assert "sellers.PlatformConnection.access_token_ciphertext: 1 held, 0 re-encrypted" in out
    assert "catalog.PlatformApiAccess.token_ciphertext: 1 held, 0 re-encrypted, 0 already " in out
    connection.refresh_from_db()
    assert connection.state == PlatformConnection.State.NEEDS_REAUTH
    assert PlatformApiAccess.objects.get().state == PlatformApiAccess.State.NEEDS_SIGN_IN
    assert len([m for m in mail.outbox if seller.user.email in m.to]) == 1


# --- no encrypted field escapes the rotation ---------------------------------------------------


def test_every_encrypted_field_is_covered_by_the_rotation() -> None:
    """Fails when a field holding ciphertext is added without the vault's field type, or
    an encrypted model has no receiver for a lost key."""
    found = vault.encrypted_fields()
    labelled = {
        key_rotation.field_label(model, name) for model, names in found.items() for name in names
    }
    # The rotation's report names exactly the encrypted fields found by introspection.
    assert set(key_rotation.rotate().fields) == labelled
    assert labelled >= {
        "sellers.PlatformConnection.access_token_ciphertext",
        "sellers.PlatformConnection.refresh_token_ciphertext",
        "catalog.PlatformApiAccess.token_ciphertext",
    }
    # Any field whose name says it holds ciphertext is of the vault's type.
    for model in apps.get_models():
        for field in model._meta.get_fields():
            name = getattr(field, "name", "")
            if any(word in name for word in ("ciphertext", "encrypted")):
                assert isinstance(field, vault.EncryptedTextField), f"{model.__name__}.{name}"
    # Every encrypted model's app handles a lost key (a state a person sees).
    for model in found:
        assert ciphertext_lost.has_listeners(model), model._meta.label


# Where the vault encrypts, and what holds the result: a new caller must be added here
# once its ciphertext is rotated (an EncryptedTextField) or, like the session's copy of a
# pending sign-in's password (PENDING_SECONDS, never rotated), it is short-lived.
ENCRYPTING_MODULES = {
    "sellers/models.py": "PlatformConnection.tokens_set: EncryptedTextField",
    "sellers/key_rotation.py": "re-encrypts EncryptedTextField values",
    "marketplace/catalog/api_access/sign_in.py": (
        "PlatformApiAccess.token_ciphertext: EncryptedTextField"
    ),
    "marketplace/catalog/api_access/views.py": "the session's pending sign-in, 10 minutes at most",
}


def test_every_module_that_encrypts_is_known_to_the_rotation() -> None:
    callers = set()
    for top in ("marketplace", "sellers"):
        for path in (REPO / top).rglob("*.py"):
            if "migrations" in path.parts or path.name == "vault.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    func = node.func
                    name = getattr(func, "attr", None) or getattr(func, "id", None)
                    if name in ("token_encrypt", "token_reencrypt", "encrypt"):
                        callers.add(path.relative_to(REPO).as_posix())
    assert callers <= set(ENCRYPTING_MODULES), sorted(callers - set(ENCRYPTING_MODULES))
