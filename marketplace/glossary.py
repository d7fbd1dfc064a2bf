"""The words people read: the single place for the terms the seller and staff pages use.

Pages and e-mails say what a thing is for the person reading, not how it is built: a
seller "connects the platform account", they do not "hold a grant"; a listing is
"refused", not "rejected by EDRTS". Templates read these through ``{% term "key" %}``
(``marketplace/templatetags/display.py``) and code through :func:`term`, so a word is
changed once, here. ``ENGINEER_WORDS`` lists what must never show on a seller's page
(the portal tests read every seller page against it).
"""

from __future__ import annotations

from typing import Final

TERMS: Final[dict[str, str]] = {
    # The connection to the platform (OAuth underneath).
    "connection": "Platform connection",
    "connection_live": "Connected",
    "connection_lost": "Connection lost: connect your platform account again",
    "connection_expires": "Connection renews automatically",
    "reconnect": "Connect again",
    # Listings: the status the marketplace gave each product.
    "listing_live": "Live",
    "listing_refused": "Refused",
    "listing_out_of_stock": "Out of stock",
    "listing_inactive": "Inactive",
    "listing_refused_reason": "Why it was refused",
    "listing_status_sync": "Listing statuses sent to your platform",
    # Orders.
    "order_problem": "Needs your fix",
    "order_up_to_date": "Up to date",
    "order_late": "Late",
    "ship_by": "Ship by",
    # Returns and refunds.
    "return_to_authorize": "Return waiting for your answer",
    "return_open": "Open",
    "return_done": "Done",
    "refund": "Refund",
    # Money.
    "subtotal": "Items",
    "tax": "Tax",
    "shipping": "Shipping",
    "discount": "Discount",
    "total": "Total",
    "refunded": "Refunded",
    # What needs you.
    "todo": "What needs you",
    "todo_nothing": "Nothing needs you right now.",
    # Seller performance (marketplace/performance).
    "performance": "Performance",
    "performance_over": "over the limit",
    "performance_what": "What it counts",
    "performance_todo": "What you can do:",
    # Time.
    "every_interval": "every {interval}",
}

# What engineers say and sellers should never read (lower case; matched as substrings of
# the page's visible text, so keep each one specific).
ENGINEER_WORDS: Final[tuple[str, ...]] = (
    "access token",
    "refresh token",
    "grant",
    "revocation endpoint",
    "edrts",
    "oauth",
    "crontab",
    "*/",
    "webhook",
)


def term(key: str, **values: object) -> str:
    """The plain words for ``key`` (a KeyError for an unknown key: a typo shows in tests,
    not as an empty label on a page)."""
    words = TERMS[key]
    return words.format(**values) if values else words


def every(seconds: int) -> str:
    """An interval in words: 60 -> "every minute", 300 -> "every 5 minutes"."""
    if seconds <= 0:
        return "continuously"
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return term("every_interval", interval="hour" if hours == 1 else f"{hours} hours")
    if seconds % 60 == 0:
        minutes = seconds // 60
        return term("every_interval", interval="minute" if minutes == 1 else f"{minutes} minutes")
    return term("every_interval", interval=f"{seconds} seconds")
