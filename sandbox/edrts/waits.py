"""Requests inside a reset window: after a 429, an API user must wait for the
``X-Rate-Limit-Reset`` it named. A request arriving before that (later than the in-flight
grace of ``retry_watch``) is an ``edrts_reset_window`` violation, counted, not refused."""

from django.http import HttpRequest, HttpResponse

from sandbox.common import violations
from sandbox.common.retry_watch import WaitBook
from sandbox.records.api_users.models import PlatformUser

_users = WaitBook(kind=violations.EDRTS_RESET_WINDOW)


def reset() -> None:
    _users.reset()


def check_arrival(user: PlatformUser, request: HttpRequest, *, arrived_at: float) -> None:
    _users.check_arrival(
        user.id,
        request,
        arrived_at=arrived_at,
        seller=user.username,
        client_id=f"api-user:{user.username}",
    )


def note_answer(user: PlatformUser, request: HttpRequest, response: HttpResponse) -> None:
    """Only a 429 opens a wait: a 503 fault also carries the window's reset time, which
    asks for no wait."""
    if response.status_code == 429:
        _users.note_answer(user.id, request, response)
