"""Staff forms of the catalog pages (validation only; services do the work)."""

from __future__ import annotations

from typing import Any

from django import forms

from marketplace.catalog.feeds import DELIMITERS
from marketplace.catalog.mapping import MappingError, mapping_default, mapping_parse

DAYS = [("*", "every day")] + [
    (str(n), name)
    for n, name in enumerate(
        ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    )
]


class SignInForm(forms.Form):
    username = forms.CharField(max_length=200)
    password = forms.CharField(max_length=500, widget=forms.PasswordInput)


class CodeForm(forms.Form):
    code = forms.RegexField(
        regex=r"^\s*\d{4,10}\s*$",
        error_messages={"invalid": "The code is the digits from the e-mail."},
    )

    def clean_code(self) -> str:
        return self.cleaned_data["code"].strip()


class ScheduleForm(forms.Form):
    day = forms.ChoiceField(choices=DAYS, initial="*")
    hour = forms.IntegerField(min_value=0, max_value=23, initial=2)
    minute = forms.IntegerField(min_value=0, max_value=59, initial=0)


class ScheduleChangeForm(ScheduleForm):
    paused = forms.BooleanField(required=False)


class FeedForm(ScheduleForm):
    mapping = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false"}),
        help_text="One line per column: listing column = the seller's field on the platform.",
    )
    delimiter = forms.ChoiceField(choices=[(d, d) for d in DELIMITERS], initial="comma")
    compression = forms.ChoiceField(
        choices=[("gzip", "gzip"), ("zip", "zip"), ("", "none")], initial="gzip", required=False
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["mapping"].initial = mapping_default().as_text()

    def clean_mapping(self) -> Any:
        try:
            return mapping_parse(self.cleaned_data["mapping"])
        except MappingError as exc:
            raise forms.ValidationError(exc.problems) from exc


class ListingFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=100)
    status = forms.ChoiceField(
        required=False,
        choices=[("", "all"), ("active", "active"), ("inactive", "inactive")],
    )
