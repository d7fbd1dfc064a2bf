"""The staff findings page's filter and the settle form."""

from __future__ import annotations

from typing import Any

from django import forms

from marketplace.reconcile.models import FindingStatus
from marketplace.reconcile.selectors import kind_choices


class FindingFilterForm(forms.Form):
    kind = forms.ChoiceField(required=False)
    seller = forms.IntegerField(required=False, min_value=1)
    status = forms.ChoiceField(required=False, choices=[("", "Any status"), *FindingStatus.choices])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        kind = self.fields["kind"]
        assert isinstance(kind, forms.ChoiceField)
        kind.choices = [("", "Any kind"), *kind_choices()]


class SettleForm(forms.Form):
    note = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))
