"""Who may open the staff pages (dashboard, catalog): signed-in staff. Anonymous → sign-in
page, others → 403. Below every app: the apps import it, it imports none of them."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponseBase
from django.shortcuts import render

View = Callable[..., HttpResponseBase]


class StaffRequest(HttpRequest):
    """What a ``staff_required`` view is given (a type for annotations only): a request of
    a signed-in staff user."""

    user: User


def staff_required(view: View) -> View:
    @wraps(view)
    def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponseBase:
        if not request.user.is_staff:
            return render(request, "dashboard/forbidden.html", status=403)
        return view(request, *args, **kwargs)

    return login_required(wrapper)
