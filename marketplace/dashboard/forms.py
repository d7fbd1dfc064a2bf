"""Filter forms of the dashboard lists (GET parameters, validated; bad values are ignored)."""

from __future__ import annotations

from typing import Any

from django import forms

from marketplace.dashboard.order_lists import DEFAULT_SORT, ORDER_SORTS, OrderFilters
from marketplace.dashboard.selectors import SELLER_SORTS
from marketplace.orders.models import Order, OrderSync
from marketplace.performance import selectors as performance
from sellers.models import PlatformConnection


class SellerFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=100, label="Search")
    state = forms.ChoiceField(
        required=False,
        choices=[("", "Any state"), *PlatformConnection.State.choices],
        label="Connection",
    )
    has_failures = forms.BooleanField(required=False, label="Has failed pushes")
    flagged = forms.ChoiceField(
        required=False,
        choices=[("", "Any performance"), *performance.FLAG_CHOICES],
        label="Performance",
    )
    sort = forms.ChoiceField(
        required=False, choices=[(key, key) for key in SELLER_SORTS], widget=forms.HiddenInput
    )


class OrderFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=128, label="Order or buyer")
    seller_name = forms.CharField(required=False, max_length=100, label="Seller")
    state = forms.ChoiceField(
        required=False, choices=[("", "Any state"), *Order.State.choices], label="State"
    )
    status = forms.ChoiceField(
        required=False, choices=[("", "Any sync status"), *OrderSync.Status.choices], label="Sync"
    )
    placed_from = forms.DateField(
        required=False, label="Placed from", widget=forms.DateInput(attrs={"type": "date"})
    )
    placed_to = forms.DateField(
        required=False, label="Placed to", widget=forms.DateInput(attrs={"type": "date"})
    )
    late = forms.BooleanField(required=False, label="Late (ship-by date passed)")
    problems = forms.BooleanField(required=False, label="Has open problems")
    seller = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)
    sort = forms.ChoiceField(
        required=False, choices=[(key, key) for key in ORDER_SORTS], widget=forms.HiddenInput
    )

    def filters(self) -> OrderFilters:
        params = cleaned(self)
        return OrderFilters(
            search=(params["q"] or "").strip(),
            state=params["state"] or "",
            sync_status=params["status"] or "",
            seller_id=params["seller"],
            seller_name=(params["seller_name"] or "").strip(),
            placed_from=params["placed_from"],
            placed_to=params["placed_to"],
            late=bool(params["late"]),
            has_problems=bool(params["problems"]),
            sort=params["sort"] or DEFAULT_SORT,
        )

    def is_filtered(self) -> bool:
        return any(self.data.get(name) for name in self.fields if name not in ("sort", "page"))


def cleaned(form: forms.Form) -> dict[str, Any]:
    """The valid fields of a bound form; an invalid field counts as not given."""
    form.is_valid()
    return {name: form.cleaned_data.get(name) for name in form.fields}
