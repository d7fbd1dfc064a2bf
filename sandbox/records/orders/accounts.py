"""Clients (marketplaces) and seller accounts: idempotent upserts used by CLI and control API."""

from sandbox.common import clock
from sandbox.common.secrets_hashing import password_hash, token_hash
from sandbox.records.orders.models import Client, Seller


def client_upsert(
    *, client_id: str, client_secret: str, redirect_url: str, name: str = ""
) -> Client:
    client, _ = Client.objects.update_or_create(
        client_id=client_id,
        defaults={
            "secret_hash": token_hash(client_secret),
            "redirect_url": redirect_url,
            "name": name or client_id,
        },
        create_defaults={
            "secret_hash": token_hash(client_secret),
            "redirect_url": redirect_url,
            "name": name or client_id,
            "created_at": clock.now(),
        },
    )
    return client


def seller_upsert(*, username: str, password: str, name: str = "") -> Seller:
    seller, _ = Seller.objects.update_or_create(
        username=username,
        defaults={"password_hash": password_hash(password), "name": name or username},
        create_defaults={
            "password_hash": password_hash(password),
            "name": name or username,
            "created_at": clock.now(),
        },
    )
    return seller
