"""E-mails to sellers about their platform connection (no token ever goes in one)."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse

from sellers.models import PlatformConnection

logger = logging.getLogger(__name__)


def _send(
    *, connection: PlatformConnection, subject: str, template: str, context: dict[str, Any]
) -> bool:
    user = connection.seller.user
    if not user.email:
        logger.warning("seller %s has no e-mail address; notice not sent", connection.seller_id)
        return False
    body = render_to_string(
        template,
        {
            "seller": connection.seller,
            "connection": connection,
            "connection_url": settings.APP_BASE_URL + reverse("sellers:connection"),
            **context,
        },
    )
    try:
        send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [user.email])
    except Exception:
        # A mail outage must not undo the state change it reports; the portal shows it too.
        logger.exception("could not e-mail seller %s", connection.seller_id)
        return False
    return True


def email_reauth_required(*, connection: PlatformConnection, reason: str) -> bool:
    return _send(
        connection=connection,
        subject="Action needed: reconnect your platform account",
        template="sellers/email/reauth_required.txt",
        context={"reason": reason},
    )


def email_refresh_token_expiring(*, connection: PlatformConnection, days: int) -> bool:
    return _send(
        connection=connection,
        subject=f"Your platform authorization expires in {days} day{'s' if days != 1 else ''}",
        template="sellers/email/refresh_token_expiring.txt",
        context={"days": days},
    )
