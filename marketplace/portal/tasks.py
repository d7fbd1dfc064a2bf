"""The portal's periodic job: the sellers' "what needs you" digests."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from marketplace.portal.digest import seller_digests_send


@shared_task(ignore_result=True)
def seller_digests_task() -> int:
    """Beat: e-mail each seller's digest when it is due (marketplace/portal/digest.py)."""
    return seller_digests_send(now=timezone.now())
