"""Staff forms of a seller's catalog: the feed, its schedule, the listing filter and the
listing-status import (validation only; services do the work)."""

from __future__ import annotations

from typing import Any

from django import forms

from marketplace.catalog.feeds.mapping import (
    DEFAULT_MAPPING,
    REQUIRED_COLUMNS,
    MappingError,
    mapping_default,
    mapping_parse,
)
from marketplace.catalog.feeds.provision import DELIMITERS
from marketplace.catalog.listing_status.join_import import FIELD_NAME
from marketplace.catalog.listing_status.status_file import COLUMNS, DEFAULT_TARGETS

DAYS = [("*", "every day")] + [
    (str(n), name)
    for n, name in enumerate(
        ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    )
]


class ScheduleForm(forms.Form):
    # The platform runs every schedule in UTC (its cron has no zone): the labels say so.
    day = forms.ChoiceField(choices=DAYS, initial="*", label="Day")
    hour = forms.IntegerField(min_value=0, max_value=23, initial=2, label="Hour (UTC)")
    minute = forms.IntegerField(min_value=0, max_value=59, initial=0, label="Minute")


class ScheduleChangeForm(ScheduleForm):
    paused = forms.BooleanField(required=False)


# What staff read for each listing column of the feed.
COLUMN_LABELS: dict[str, str] = {
    "sku": "SKU",
    "title": "Title",
    "description": "Description",
    "brand": "Brand",
    "gtin": "GTIN (barcode)",
    "price": "Price",
    "sale_price": "Sale price",
    "quantity": "Quantity in stock",
    "condition": "Condition",
    "product_type": "Product type",
    "image_link": "Image link",
    "link": "Product page link",
}
EMPTY = ""
# The seller's fields staff choose from: the platform's usual product fields (the
# sandbox's demo catalogs hold exactly these). A field of another name goes in the row's
# "another field" box.
KNOWN_FIELDS: tuple[str, ...] = tuple(field for _, field in DEFAULT_MAPPING)


class FeedForm(ScheduleForm):
    """The feed's set-up: for each listing column, the seller's field that fills it (a
    select, or a name typed in the row's "another field" box), then the file's format
    and schedule. ``cleaned_data["mapping"]`` is the validated ``FeedMapping``."""

    delimiter = forms.ChoiceField(choices=[(d, d) for d in DELIMITERS], initial="comma")
    compression = forms.ChoiceField(
        choices=[("gzip", "gzip"), ("zip", "zip"), ("", "none")], initial="gzip", required=False
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [(EMPTY, "(leave empty)"), *((field, field) for field in KNOWN_FIELDS)]
        for column, field in mapping_default().pairs:
            required = column in REQUIRED_COLUMNS
            self.fields[f"map_{column}"] = forms.ChoiceField(
                choices=choices,
                initial=field,
                required=False,
                label=COLUMN_LABELS[column] + (" (required)" if required else ""),
            )
            self.fields[f"other_{column}"] = forms.CharField(
                required=False,
                max_length=100,
                label=f"or another field for {COLUMN_LABELS[column]}",
            )

    def mapping_rows(self) -> list[tuple[str, forms.BoundField, forms.BoundField]]:
        """(column, its select, its "another field" box), in the feed's column order."""
        return [
            (column, self[f"map_{column}"], self[f"other_{column}"])
            for column, _ in mapping_default().pairs
        ]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        lines = []
        for column, _ in mapping_default().pairs:
            other = (cleaned.get(f"other_{column}") or "").strip()
            field = other or cleaned.get(f"map_{column}") or EMPTY
            lines.append(f"{column} = {field}")
        try:
            # One set of rules for every mapping: the same parser checks what is chosen.
            cleaned["mapping"] = mapping_parse("\n".join(lines))
        except MappingError as exc:
            raise forms.ValidationError(exc.problems) from exc
        return cleaned


class ListingFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=100)
    status = forms.ChoiceField(
        required=False,
        choices=[("", "all"), ("active", "active"), ("inactive", "inactive")],
    )


# --- the listing-status import ---------------------------------------------------------

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
