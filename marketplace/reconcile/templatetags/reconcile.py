"""Reconciliation on other apps' staff pages: the seller page's card and the overview's
panel (inclusion tags, so those pages need no import of this app), and both versions of
a finding as readable JSON."""

from __future__ import annotations

import json
from typing import Any

from django import template

from marketplace.reconcile import selectors
from marketplace.reconcile.kinds import kind_label

register = template.Library()


@register.inclusion_tag("dashboard/_reconcile_seller.html")
def seller_reconcile_card(seller: Any, connection: Any = None) -> dict[str, Any]:
    """The card on the staff seller page; Reconcile now while the connection is live."""
    return {
        "seller": seller,
        "connected": bool(connection is not None and connection.state == "connected"),
        **selectors.seller_reconcile_summary(seller_id=seller.pk),
    }


@register.inclusion_tag("dashboard/_reconcile_panel.html")
def reconcile_panel() -> dict[str, Any]:
    open_by_kind = selectors.open_counts_by_kind()
    return {
        "open_total": sum(open_by_kind.values()),
        "by_kind": selectors.findings_by_kind(open_by_kind=open_by_kind),
    }


@register.filter
def finding_kind(kind: str) -> str:
    return kind_label(kind)


@register.filter
def as_json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, default=str, ensure_ascii=False)
