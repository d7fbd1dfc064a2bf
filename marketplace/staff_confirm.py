"""The one "confirm, then act" step of every staff button (dashboard and catalog pages).

Only what cannot be undone asks first (disconnecting a seller, removing a feed, applying
a feed that deactivates listings, turning live status updates off); a harmless action
(Pull now, Retry push) runs at once. With JavaScript the button's ``confirm()`` sets
``confirmed=yes`` before the POST; without it the first POST gets a small confirmation
page, whose button sends the same POST again with ``confirmed=yes``.

Below every app, like ``marketplace.access``: the apps import it, it imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme


@dataclass(frozen=True)
class Confirmation:
    """What the confirmation page asks: a question that says what cannot be undone (and,
    for a bulk action, how many things it touches)."""

    title: str
    question: str
    button: str
    danger: bool = False


@dataclass(frozen=True)
class Outcome:
    """How an action went, in words for the person who pressed the button ("" says
    nothing)."""

    ok: bool
    message: str = ""


def is_confirmed(request: HttpRequest) -> bool:
    return request.POST.get("confirmed") == "yes"


def back_url_of(request: HttpRequest, default: str) -> str:
    """The page to go back to: the form's ``next`` when it is one of ours, else
    ``default`` (a button elsewhere, the overview's Retry, brings the user back there)."""
    next_url = request.POST.get("next", "")
    if next_url and url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return next_url
    return default


def confirm_page(
    request: HttpRequest, *, confirmation: Confirmation, back_url: str
) -> HttpResponse:
    """The page that asks; its button POSTs the same form again with ``confirmed=yes``."""
    return render(
        request,
        "dashboard/confirm.html",
        {
            "confirmation": confirmation,
            "action_url": request.path,
            "back_url": back_url,
            # A bulk action's selection goes round the confirmation page unchanged.
            "carried": [
                (name, value)
                for name in request.POST
                if name not in ("csrfmiddlewaretoken", "confirmed", "next")
                for value in request.POST.getlist(name)
            ],
        },
    )


def confirmed_action(
    request: HttpRequest,
    *,
    back_url: str,
    run: Callable[[], Outcome],
    confirmation: Confirmation | None = None,
) -> HttpResponse:
    """Run ``run`` (after the confirmation, when there is one), show its outcome as a
    message and go back to ``back_url``."""
    back_url = back_url_of(request, back_url)
    if confirmation is not None and not is_confirmed(request):
        return confirm_page(request, confirmation=confirmation, back_url=back_url)
    outcome = run()
    if outcome.message:
        (messages.success if outcome.ok else messages.error)(request, outcome.message)
    return redirect(back_url)
