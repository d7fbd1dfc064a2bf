"""The last page of every listing of the order interface (orders, returns, refunds): a
``next_cursor`` null, absent or ``""`` ends it (the reference types it a string and shows no
null), over HTTP against a scripted platform."""

from __future__ import annotations

import json
from typing import Any

import pytest

from marketplace.platform.order_source import OrderSourceClient
from tests.marketplace.platform.conftest import Answer, TinyPlatform
from tests.marketplace.platform.test_oauth_transport import RecordingTokens

pytestmark = pytest.mark.usefixtures("no_embargo")

LISTINGS = [
    ("/api/v1/orders", "orders", "iter_order_pages"),
    ("/api/v1/returns", "returns", "iter_return_pages"),
    ("/api/v1/refunds", "refunds", "iter_refund_pages"),
]
LAST_PAGES: list[dict[str, Any]] = [{"next_cursor": None}, {}, {"next_cursor": ""}]


@pytest.mark.parametrize(("path", "key", "pages"), LISTINGS)
@pytest.mark.parametrize("last", LAST_PAGES, ids=["null", "absent", "empty"])
def test_a_listing_ends_on_a_null_absent_or_empty_cursor(
    tiny_platform: TinyPlatform,
    settings: Any,
    seller: Any,
    path: str,
    key: str,
    pages: str,
    last: dict[str, Any],
) -> None:
    settings.PLATFORM_BASE_URL = tiny_platform.url + "/api/v1"
    tiny_platform.answer(
        "GET",
        path,
        Answer(200, json.dumps({key: [{"n": 1}], "next_cursor": "c+2"})),
        Answer(200, json.dumps({key: [{"n": 2}], **last})),
        Answer(200, json.dumps({key: [{"n": 3}], "next_cursor": "never-read"})),
    )
    client = OrderSourceClient(seller_id=seller.id, tokens=RecordingTokens("at-1"))

    read = [item["n"] for page in getattr(client, pages)() for item in page[key]]

    assert read == [1, 2]
    assert len(tiny_platform.requests_to(path)) == 2
