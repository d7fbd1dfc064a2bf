"""Who may open a seller's pages (the portal and the connection pages): signed-in sellers."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from sellers import selectors

View = Callable[..., HttpResponse]


def seller_required(view: View) -> View:
    """Signed-in sellers only. Staff and users without a seller profile get a clear 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if request.user.is_staff:
            return render(request, "sellers/not_a_seller.html", {"staff": True}, status=403)
        seller = selectors.seller_for_user(user=request.user)
        if seller is None:
            return render(request, "sellers/not_a_seller.html", {"staff": False}, status=403)
        request.seller = seller
        return view(request, *args, **kwargs)

    return login_required(wrapper)
