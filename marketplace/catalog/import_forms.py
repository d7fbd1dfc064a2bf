"""Staff forms of the listing-status import (validation only; services do the work)."""

from __future__ import annotations

from typing import Any

from django import forms

from marketplace.catalog.forms import DAYS
from marketplace.catalog.imports import FIELD_NAME
from marketplace.catalog.status_file import COLUMNS, DEFAULT_TARGETS

HOURS = [("*", "every hour")] + [(str(n), f"{n:02d}") for n in range(24)]
# What staff read for each status column (the file's own headers, ``COLUMNS``, stay as the
# platform's file map knows them).
ROLE_LABELS: dict[str, str] = {
    "sku": "SKU",
    "listing_id": "Marketplace listing id",
    "status": "Listing status",
    "reason": "Why it was refused",
    "listing_url": "Listing link",
    "updated_at": "Last updated",
}


class ImportScheduleForm(forms.Form):
    """Like the feed's schedule, and an import may also run every hour."""

    day = forms.ChoiceField(choices=DAYS, initial="*", label="Day")
    hour = forms.ChoiceField(choices=HOURS, initial="*", label="Hour (UTC)")
    minute = forms.IntegerField(min_value=0, max_value=59, initial=15, label="Minute")
    paused = forms.BooleanField(required=False)


class ImportTargetsForm(forms.Form):
    """The seller's field each status column fills (the SKU column joins on the feed's
    SKU field and is not editable)."""

    def __init__(self, *args: Any, targets: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        current = {**DEFAULT_TARGETS, **(targets or {})}
        for role, header in COLUMNS:
            if role == "sku":
                continue
            self.fields[role] = forms.RegexField(
                regex=FIELD_NAME,
                label=ROLE_LABELS[role],
                help_text=f"the status file's column “{header}”",
                initial=current[role],
                max_length=64,
                error_messages={
                    "invalid": "Letters, digits and _, not starting with a digit (at most 64)."
                },
            )

    def targets(self) -> dict[str, str]:
        return {role: self.cleaned_data[role] for role, _ in COLUMNS if role != "sku"}
