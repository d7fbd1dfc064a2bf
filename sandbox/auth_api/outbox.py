"""The platform's outgoing mail, kept instead of sent: the two-factor e-mails are read
here (the outbox page, ``GET /sandbox/api/outbox``)."""

from sandbox.common import clock
from sandbox.records.api_users.models import OutboxEmail


def email_send(*, to: str, subject: str, body: str, code: str = "") -> OutboxEmail:
    return OutboxEmail.objects.create(
        to=to, subject=subject, body=body, code=code, created_at=clock.now()
    )


def email_json(email: OutboxEmail) -> dict:
    return {
        "id": email.id,
        "to": email.to,
        "subject": email.subject,
        "body": email.body,
        "code": email.code,
        "sent_at": email.created_at.isoformat(),
    }


def outbox_list(*, to: str | None = None, limit: int = 50) -> list[OutboxEmail]:
    """The latest first."""
    rows = OutboxEmail.objects.all()
    if to:
        rows = rows.filter(to__iexact=to)
    return list(rows.order_by("-id")[:limit])
