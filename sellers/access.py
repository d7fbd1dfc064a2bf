"""Who may open a seller's pages (the portal and the connection pages): signed-in sellers."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponseBase
from django.shortcuts import render

from sellers import selectors
from sellers.models import Seller

# HttpResponseBase: a seller's view may stream (the order list's CSV export).
View = Callable[..., HttpResponseBase]


class SellerRequest(HttpRequest):
    """What a ``seller_required`` view is given (a type for annotations only): a request
    of a signed-in user, with ``seller`` their seller profile."""

    user: User
    seller: Seller


def seller_required(view: View) -> View:
    """Signed-in sellers only. Staff and users without a seller profile get a clear 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponseBase:
        if request.user.is_staff:
            return render(request, "sellers/not_a_seller.html", {"staff": True}, status=403)
        seller = selectors.seller_for_user(user=request.user)
        if seller is None:
            return render(request, "sellers/not_a_seller.html", {"staff": False}, status=403)
        seller_request = cast(SellerRequest, request)  # the same object, seller added now
        seller_request.seller = seller
        return view(seller_request, *args, **kwargs)

    return login_required(wrapper)
