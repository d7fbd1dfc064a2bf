"""factory_boy factories for the app's tests: the personas and the rows they own.

Personas (each password is ``password_of(username)``):

* ``StaffUserFactory``: marketplace staff (``is_staff`` and ``is_superuser``), ``staff``.
* ``UserFactory``: a signed-in user with no seller profile.
* ``SellerFactory``: a user with a seller profile (``SellerFactory(username="alice")``).

Data:

* ``PlatformConnectionFactory``: a seller's grant in one of its states (traits
  ``connected`` (the default), ``needs_reauth``, ``disconnected``, ``not_connected``,
  ``access_expired``). Tokens go through the real vault (``tokens_set``): the database
  holds only ciphertext, as in production. These tokens are unknown to the sandbox: for a
  grant the platform honours use ``Platform.connect`` (tests/support/app_fixtures.py).
* ``OrderFactory``: an order with its lines (``lines=2`` by default, ``lines=0`` for none)
  and, with ``sync=True``, its outbox row. Rows only: no push is queued; an order that must
  reach the platform goes through the intake service (``make_order``).
* ``SellerSyncFactory``, ``ListingFactory``, ``CatalogSourceFactory``.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from decimal import Decimal
from typing import Any

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone
from factory.django import DjangoModelFactory

from marketplace.catalog.models import CatalogSource, Listing
from marketplace.orders.models import Order, OrderLine, OrderSync
from marketplace.sync.models import SellerSync
from sellers import vault
from sellers.models import PlatformConnection, Seller


def password_of(username: str) -> str:
    """Every persona's password: ``alice`` signs in with ``alice-pass-123``."""
    return f"{username}-pass-123"


class UserFactory(DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user-{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    is_staff = False
    is_superuser = False

    @factory.post_generation
    def password(user: Any, create: bool, extracted: str | None, **kwargs: Any) -> None:
        # Hashed with the configured hasher (tests use a fast one: app_fixtures).
        user.set_password(extracted or password_of(user.username))
        if create:
            user.save(update_fields=["password"])


class StaffUserFactory(UserFactory):
    username = "staff"
    is_staff = True
    is_superuser = True


class SellerFactory(DjangoModelFactory):
    """A seller; ``SellerFactory(username="bob", display_name="Bob's Shop")``."""

    class Meta:
        model = Seller

    class Params:
        username = factory.Sequence(lambda n: f"seller-{n}")

    user = factory.SubFactory(UserFactory, username=factory.SelfAttribute("..username"))
    display_name = factory.LazyAttribute(lambda seller: f"{seller.username.title()}'s Shop")


def _new_token(prefix: str) -> str:
    return f"{prefix}-{secrets.token_urlsafe(24)}"


class PlatformConnectionFactory(DjangoModelFactory):
    """A seller's grant; the default is a live one (state connected, tokens stored)."""

    class Meta:
        model = PlatformConnection

    class Params:
        now = factory.LazyFunction(timezone.now)
        # In clear only here; the row gets the vault's ciphertext.
        access_token = factory.LazyFunction(lambda: _new_token("at"))
        refresh_token = factory.LazyFunction(lambda: _new_token("rt"))

        # A trait cannot override a Params value (factory_boy resolves those first): the
        # traits without a grant empty the ciphertext columns themselves.
        needs_reauth = factory.Trait(
            state=PlatformConnection.State.NEEDS_REAUTH,
            access_token_ciphertext="",
            refresh_token_ciphertext="",
            last_error="invalid_grant: the refresh token was revoked",
            generation=2,
        )
        disconnected = factory.Trait(
            state=PlatformConnection.State.DISCONNECTED,
            access_token_ciphertext="",
            refresh_token_ciphertext="",
            generation=2,
        )
        not_connected = factory.Trait(
            state=PlatformConnection.State.NOT_CONNECTED,
            access_token_ciphertext="",
            refresh_token_ciphertext="",
            access_token_expires_at=None,
            refresh_token_expires_at=None,
            connected_at=None,
            generation=0,
        )
        access_expired = factory.Trait(
            access_token_expires_at=factory.LazyAttribute(lambda c: c.now - timedelta(minutes=1))
        )

    seller = factory.SubFactory(SellerFactory)
    state = PlatformConnection.State.CONNECTED
    access_token_ciphertext = factory.LazyAttribute(
        lambda c: vault.token_encrypt(c.access_token) if c.access_token else ""
    )
    refresh_token_ciphertext = factory.LazyAttribute(
        lambda c: vault.token_encrypt(c.refresh_token) if c.refresh_token else ""
    )
    access_token_expires_at = factory.LazyAttribute(lambda c: c.now + timedelta(hours=1))
    refresh_token_expires_at = factory.LazyAttribute(lambda c: c.now + timedelta(days=365))
    connected_at = factory.LazyAttribute(lambda c: c.now - timedelta(days=3))
    generation = 1


class OrderLineFactory(DjangoModelFactory):
    class Meta:
        model = OrderLine

    order = None  # always given by OrderFactory (or the caller)
    mp_line_number = factory.Sequence(lambda n: str(n + 1))
    sku = factory.LazyAttribute(lambda line: f"SKU-{line.mp_line_number}")
    product_name = factory.LazyAttribute(lambda line: f"Mug {line.mp_line_number}")
    quantity = 2
    unit_price = Decimal("12.50")


class OrderFactory(DjangoModelFactory):
    """An order awaiting shipment, its lines numbered 1..``lines``."""

    class Meta:
        model = Order
        skip_postgeneration_save = True

    mp_order_number = factory.Sequence(lambda n: f"MP-F{n:05d}")
    seller = factory.SubFactory(SellerFactory)
    state = Order.State.AWAITING_SHIPMENT
    sales_channel = "EU"
    purchase_date = factory.LazyFunction(lambda: timezone.now() - timedelta(days=1))
    currency = "EUR"
    customer_full_name = "Ada Lovelace"
    customer_email = "ada@example.com"
    ship_full_name = "Ada Lovelace"
    ship_address1 = "12 Analytical Row"
    ship_city = "London"
    ship_postal_code = "N1 9GU"
    ship_country_code = "GBR"
    ship_country_code_iso2 = "GB"
    intake_fingerprint = factory.Sequence(lambda n: f"{n:064d}")

    @factory.post_generation
    def lines(order: Order, create: bool, extracted: int | None, **kwargs: Any) -> None:
        if not create:  # build(): an unsaved order cannot own rows
            return
        count = 2 if extracted is None else extracted
        for n in range(1, count + 1):
            OrderLineFactory.create(order=order, mp_line_number=str(n), **kwargs)

    @factory.post_generation
    def sync(order: Order, create: bool, extracted: bool | None, **kwargs: Any) -> None:
        if create and extracted:
            OrderSync.objects.create(order=order, **kwargs)


class SellerSyncFactory(DjangoModelFactory):
    class Meta:
        model = SellerSync

    seller = factory.SubFactory(SellerFactory)


class ListingFactory(DjangoModelFactory):
    class Meta:
        model = Listing

    seller = factory.SubFactory(SellerFactory)
    sku = factory.Sequence(lambda n: f"SKU-{n:04d}")
    title = factory.LazyAttribute(lambda listing: f"Stoneware Mug {listing.sku}")
    price = Decimal("9.99")
    quantity = 3


class CatalogSourceFactory(DjangoModelFactory):
    class Meta:
        model = CatalogSource

    seller = factory.SubFactory(SellerFactory)
    account_id = "1"
    db_id = "1"
