"""What the staff actions on one seller's catalog share: find the seller and its linked
database, ask before a step that cannot be undone, run one service and say how it went,
then go back to the seller's catalog page."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from marketplace.catalog import selectors
from marketplace.catalog.errors import CatalogError
from marketplace.catalog.models import CatalogSource
from sellers.models import Seller


def seller_or_404(seller_id: int) -> Seller:
    return get_object_or_404(Seller.objects.select_related("user"), pk=seller_id)


def source_or_404(seller: Seller) -> CatalogSource:
    source = selectors.catalog_source_of(seller_id=seller.pk)
    if source is None:
        raise Http404("no database linked")
    return source


def back(seller: Seller) -> HttpResponse:
    return redirect(reverse("catalog:seller", args=[seller.pk]))


def confirmed(request: HttpRequest) -> bool:
    return request.POST.get("confirmed") == "yes"


def confirm_page(
    request: HttpRequest, seller: Seller, *, title: str, question: str, button: str, danger: bool
) -> HttpResponse:
    """The confirmation step: the same POST again, with ``confirmed=yes``."""
    return render(
        request,
        "dashboard/confirm.html",
        {
            "confirmation": {
                "title": title,
                "question": question,
                "button": button,
                "danger": danger,
            },
            "action_url": request.path,
            "back_url": reverse("catalog:seller", args=[seller.pk]),
        },
    )


def act(
    request: HttpRequest,
    seller: Seller,
    call: Callable[[], object],
    *,
    success: str = "",
    errors: tuple[type[Exception], ...] = (CatalogError,),
) -> HttpResponse:
    """Run one service call; its error (the platform's words included) or ``success``
    becomes the message on the seller's page."""
    try:
        call()
    except errors as exc:
        messages.error(request, str(exc))
    else:
        if success:
            messages.success(request, success)
    return back(seller)
