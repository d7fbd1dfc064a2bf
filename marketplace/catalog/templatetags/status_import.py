"""The listing-status import's card on the seller's catalog page (one query)."""

from __future__ import annotations

from typing import Any

from django import template

from marketplace.catalog.listing_status.join_import import status_maps
from marketplace.catalog.listing_status.status_file import COLUMNS, DEFAULT_TARGETS
from marketplace.catalog.models import CatalogSource, StatusImport
from marketplace.catalog.provisioned import schedule_in_words
from marketplace.catalog.staff.forms import ROLE_LABELS, ImportScheduleForm, ImportTargetsForm

register = template.Library()


@register.inclusion_tag("catalog/_status_import.html", takes_context=True)
def status_import_card(context: Any, seller: Any, source: CatalogSource | None) -> dict[str, Any]:
    status_import = (
        StatusImport.objects.filter(source=source).first() if source is not None else None
    )
    schedule_form = None
    if status_import is not None and status_import.is_active:
        minute, hour, _, _, day = (status_import.cron or "15 * * * *").split()[:5]
        schedule_form = ImportScheduleForm(
            initial={"day": day, "hour": hour, "minute": minute, "paused": status_import.paused}
        )
    targets = {**DEFAULT_TARGETS, **((status_import.targets if status_import else None) or {})}
    join_key = status_import.join_key if status_import and status_import.join_key else "?"
    maps = status_maps(join_key=join_key, targets=targets)
    return {
        "request": context.get("request"),
        "csrf_token": context.get("csrf_token"),
        "seller": seller,
        "source": source,
        "status_import": status_import,
        # (what staff read, the file's own column name, the seller's field it fills)
        "columns": [(ROLE_LABELS[role], header, maps[header]) for role, header in COLUMNS],
        "header": [header for _, header in COLUMNS],
        "schedule_form": schedule_form,
        "schedule_words": schedule_in_words(status_import.cron) if status_import else "",
        "targets_form": ImportTargetsForm(targets=targets),
    }
