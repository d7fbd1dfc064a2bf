"""The seller's Returns history: every return and refund, open and done, with amounts and
filters (open or done, an order or return number, the buyer's request date)."""

from __future__ import annotations

from django import forms
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from marketplace.portal import after_sale
from marketplace.portal.forms import cleaned
from sellers.access import SellerRequest, seller_required

PAGE_SIZE = 25


class ReturnHistoryForm(forms.Form):
    state = forms.ChoiceField(
        required=False, choices=[("", "open and done"), ("open", "open"), ("done", "done")]
    )
    q = forms.CharField(required=False, max_length=128, label="Order or return number")
    since = forms.DateField(required=False, label="Requested from")
    until = forms.DateField(required=False, label="Requested until")


@require_GET
@seller_required
def returns_history(request: SellerRequest) -> HttpResponse:
    form = ReturnHistoryForm(request.GET)
    params = cleaned(form)
    returns = after_sale.seller_return_history(
        seller_id=request.seller.pk,
        state=params["state"] or "",
        q=(params["q"] or "").strip(),
        since=params["since"],
        until=params["until"],
    )
    page = Paginator(returns, PAGE_SIZE).get_page(request.GET.get("page"))
    refunds = after_sale.seller_refund_history(
        seller_id=request.seller.pk, q=(params["q"] or "").strip()
    )
    return render(
        request,
        "portal/returns_history.html",
        {
            "form": form,
            "filtered": any(params.values()),
            "page": page,
            "rows": after_sale.history_rows(list(page.object_list)),
            "refund_rows": after_sale.refund_rows(list(refunds[:50])),
        },
    )
