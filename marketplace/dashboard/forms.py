"""Filter forms of the dashboard lists (GET parameters, validated; bad values are ignored)."""

from __future__ import annotations

from django import forms

from marketplace.dashboard.selectors import SELLER_SORTS
from marketplace.orders.models import Order, OrderSync
from sellers.models import PlatformConnection


class SellerFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=100, label="Search")
    state = forms.ChoiceField(
        required=False,
        choices=[("", "Any state"), *PlatformConnection.State.choices],
        label="Connection",
    )
    has_failures = forms.BooleanField(required=False, label="Has failed pushes")
    sort = forms.ChoiceField(
        required=False, choices=[(key, key) for key in SELLER_SORTS], widget=forms.HiddenInput
    )


class OrderFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=128, label="Order number")
    state = forms.ChoiceField(
        required=False, choices=[("", "Any state"), *Order.State.choices], label="State"
    )
    status = forms.ChoiceField(
        required=False, choices=[("", "Any sync status"), *OrderSync.Status.choices], label="Sync"
    )
    problems = forms.BooleanField(required=False, label="Has open problems")
    seller = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)


def cleaned(form: forms.Form) -> dict:
    """The valid fields of a bound form; an invalid field counts as not given."""
    form.is_valid()
    return {name: form.cleaned_data.get(name) for name in form.fields}
