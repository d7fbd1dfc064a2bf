"""The call log scrubs only the excerpt it keeps: the same text as the whole scrub's start.

``scrub.scrubbed_json(value, limit=n)`` writes the scrubbed JSON lazily and stops at ``n``
characters (a successful push keeps 300 of a ~2 KB answer). It must be exactly the first
``n`` characters of the whole scrub, for every ``n``, and never hold a buyer's detail.
"""

from __future__ import annotations

import json
from typing import Any

from marketplace.platform.scrub import (
    OMITTED,
    SCRUBBED,
    scrub_secrets,
    scrubbed_excerpt,
    scrubbed_json,
)

ANSWER: dict[str, Any] = {
    "mp_order_number": "MP-1",
    "marketplace_state": "AWAITING_SHIPMENT",
    "Customer": {"full_name": "Ann Example", "email": "ann@example.org"},
    "shipping_address": {"address1": "1 Long Lane", "City": "Leeds"},
    "order_lines": [
        {"sku": "SKU-1", "quantity": 2, "unit_price": 9.5, "notes": "ring twice"},
        {"sku": "SKU-é", "quantity": 1, "unit_price": None, "taxes": [{"rate": 0.2}]},
    ],
    "access_token": "secret-at",
    "flags": [True, False, None, 1e300, -3],
    "empty": {},
    "none": [],
}


def test_every_prefix_is_the_start_of_the_whole_scrub() -> None:
    whole = json.dumps(scrub_secrets(ANSWER), separators=(",", ":"))
    assert scrubbed_json(ANSWER) == whole
    for limit in range(0, len(whole) + 5):
        assert scrubbed_json(ANSWER, limit=limit) == whole[:limit]


def test_the_prefix_holds_no_buyer_detail_nor_secret() -> None:
    text = json.dumps(ANSWER)
    kept = scrubbed_excerpt(text, limit=300)
    assert kept is not None
    assert len(kept) == 300
    for detail in ("Ann Example", "ann@example.org", "1 Long Lane", "Leeds", "ring twice"):
        assert detail not in kept
    assert kept.startswith('{"mp_order_number":"MP-1","marketplace_state":"AWAITING_SHIPMENT",')
    assert f'"Customer":"{OMITTED}"' in kept
    full = scrubbed_excerpt(text)
    assert full is not None
    assert f'"access_token":"{SCRUBBED}"' in full
    assert "secret-at" not in full


def test_an_answer_that_is_not_json_is_only_described() -> None:
    assert scrubbed_excerpt("<html>token=abc</html>", limit=5) == "[22 bytes that are not JSON]"
    assert scrubbed_excerpt("", limit=5) == ""
    assert scrubbed_excerpt(None) is None
