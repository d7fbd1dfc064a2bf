"""Writing and pruning the platform call log."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from marketplace.log_redaction import redact
from marketplace.platform.models import PlatformCall

EXCERPT_CHARS = 2000
RETENTION = timedelta(days=14)


def excerpt(text: str | bytes | None) -> str:
    """A redacted, bounded excerpt of a request or response body."""
    if not text:
        return ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return redact(text[:EXCERPT_CHARS])


def platform_call_record(
    *,
    method: str,
    path: str,
    status: int | None,
    duration_ms: int,
    seller_id: int | None = None,
    order_number: str = "",
    attempt: int = 1,
    error: str = "",
    request_body: str | bytes | None = None,
    response_body: str | bytes | None = None,
) -> PlatformCall:
    return PlatformCall.objects.create(
        seller_id=seller_id,
        order_number=order_number[:128],
        method=method.upper(),
        path=redact(path)[:512],
        status=status,
        duration_ms=duration_ms,
        attempt=attempt,
        error=redact(error)[:200],
        request_excerpt=excerpt(request_body),
        response_excerpt=excerpt(response_body),
    )


def platform_call_prune(*, older_than: timedelta = RETENTION, batch_size: int = 5000) -> int:
    """Delete call records past retention, in bounded batches; returns how many."""
    cutoff = timezone.now() - older_than
    deleted = 0
    while True:
        ids = list(
            PlatformCall.objects.filter(created_at__lt=cutoff)
            .order_by("id")
            .values_list("id", flat=True)[:batch_size]
        )
        if not ids:
            return deleted
        deleted += PlatformCall.objects.filter(id__in=ids).delete()[0]
