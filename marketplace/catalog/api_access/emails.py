"""E-mails to staff about the catalog (console backend in development)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail

logger = logging.getLogger(__name__)


def staff_notify_needs_sign_in(*, reason: str) -> int:
    """Tell every active staff member with an e-mail address; returns how many."""
    recipients = list(
        get_user_model()
        .objects.filter(is_staff=True, is_active=True)
        .exclude(email="")
        .values_list("email", flat=True)
    )
    if not recipients:
        return 0
    url = f"{settings.APP_BASE_URL}/dashboard/catalog/api-access/"
    try:
        send_mail(
            subject="Platform API access needs sign-in",
            message=(
                "The platform no longer accepts the marketplace's API token, so catalog feeds "
                "cannot be set up, changed or checked until someone signs in again.\n\n"
                f"Why: {reason}\n\nSign in here: {url}\n"
            ),
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=recipients,
        )
    except Exception:  # a mail outage must not hide the state change itself
        logger.exception("could not e-mail staff about the API access")
        return 0
    return len(recipients)
