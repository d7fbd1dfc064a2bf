"""The seller's e-mail digest of what needs them: grouped by kind, rate-limited (at most
one per seller every ``SELLER_DIGEST_MINUTES``), sent only when something is new since
the last one, and only of the kinds the seller left switched on (their settings page).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse

from marketplace.portal.models import SellerNotifications
from marketplace.portal.needs_you import KINDS, seller_needs_you, sellers_needing_something
from sellers.models import Seller

logger = logging.getLogger(__name__)

# The seller's switch for each kind (SellerNotifications' fields).
SWITCHES: dict[str, str] = {
    "connection": "email_connection",
    "problems": "email_problems",
    "returns": "email_returns",
    "listings": "email_listings",
}
TITLES: dict[str, str] = {
    "connection": "Your platform connection",
    "problems": "Orders with a problem to fix",
    "returns": "Returns waiting for your answer",
    "listings": "Products the marketplace refused",
}
KEYS_KEPT = 2000


@dataclass(frozen=True)
class DigestOutcome:
    sent: bool
    why: str


def notifications_of(seller: Seller) -> SellerNotifications:
    return SellerNotifications.objects.get_or_create(seller=seller)[0]


def seller_digest_send(*, seller: Seller, now: datetime) -> DigestOutcome:
    """E-mail the seller what needs them, if the rules allow (see the module)."""
    if not seller.user.email:
        return DigestOutcome(False, "no e-mail address")
    notifications_of(seller)
    with transaction.atomic():
        # One digest at a time per seller, whatever the number of workers.
        prefs = SellerNotifications.objects.select_for_update().get(seller=seller)
        wait = timedelta(minutes=settings.SELLER_DIGEST_MINUTES)
        if prefs.last_digest_at and now - prefs.last_digest_at < wait:
            return DigestOutcome(False, "too soon")
        kinds = tuple(kind for kind in KINDS if getattr(prefs, SWITCHES[kind]))
        needs = seller_needs_you(seller=seller)
        keys = needs.keys(kinds)
        if not keys - set(prefs.sent_keys):
            return DigestOutcome(False, "nothing new")
        base = settings.APP_BASE_URL
        groups: list[dict[str, Any]] = [
            {
                "title": TITLES[kind],
                "total": needs.totals[kind],
                "items": [(item.text, base + item.url) for item in needs.items[kind]],
            }
            for kind in kinds
            if needs.items[kind]
        ]
        body = render_to_string(
            "portal/email/digest.txt",
            {
                "seller": seller,
                "groups": groups,
                "portal_url": base + reverse("sellers:portal"),
                "settings_url": base + reverse("sellers:settings"),
                "minutes": settings.SELLER_DIGEST_MINUTES,
            },
        )
        count = sum(int(group["total"]) for group in groups)
        subject = f"{count} thing{'s' if count != 1 else ''} need{'' if count != 1 else 's'} you"
        try:
            send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [seller.user.email])
        except Exception:
            # The portal shows the same list; the next sweep tries again.
            logger.exception("could not e-mail the digest to seller %s", seller.pk)
            return DigestOutcome(False, "mail failed")
        prefs.last_digest_at = now
        prefs.sent_keys = sorted(keys)[:KEYS_KEPT]
        prefs.save(update_fields=["last_digest_at", "sent_keys", "updated_at"])
    return DigestOutcome(True, "sent")


def seller_digests_send(*, now: datetime) -> int:
    """The beat's sweep: a digest to each seller who has something and may get one."""
    sent = 0
    for seller in sellers_needing_something().select_related("user").iterator(chunk_size=200):
        sent += seller_digest_send(seller=seller, now=now).sent
    return sent
