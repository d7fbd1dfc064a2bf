"""What the staff actions on one seller's catalog share: find the seller and its linked
database, ask before a step that cannot be undone (through ``marketplace.staff_confirm``,
the dashboard's step too), run one service and say how it went, then go back to the
seller's catalog page."""

from __future__ import annotations

from collections.abc import Callable

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse

from marketplace.catalog import selectors
from marketplace.catalog.errors import CatalogError
from marketplace.catalog.models import CatalogSource
from marketplace.staff_confirm import Confirmation, Outcome, confirmed_action
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


def act(
    request: HttpRequest,
    seller: Seller,
    call: Callable[[], object],
    *,
    success: str = "",
    errors: tuple[type[Exception], ...] = (CatalogError,),
    confirmation: Confirmation | None = None,
) -> HttpResponse:
    """Run one service call (after ``confirmation``, when the step cannot be undone); its
    error (the platform's words included) or ``success`` becomes the message on the
    seller's page."""

    def run() -> Outcome:
        try:
            call()
        except errors as exc:
            return Outcome(False, str(exc))
        return Outcome(True, success)

    return confirmed_action(
        request,
        confirmation=confirmation,
        back_url=reverse("catalog:seller", args=[seller.pk]),
        run=run,
    )
