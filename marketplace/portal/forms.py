"""The portal's GET forms (validated; a bad value counts as not given)."""

from __future__ import annotations

from typing import Any

from django import forms


class PortalOrderSearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=128, label="Order number")
    problems = forms.BooleanField(required=False, label="Only orders with problems to fix")


def cleaned(form: forms.Form) -> dict[str, Any]:
    """The valid fields of a bound form; an invalid field counts as not given."""
    form.is_valid()
    return {name: form.cleaned_data.get(name) for name in form.fields}
