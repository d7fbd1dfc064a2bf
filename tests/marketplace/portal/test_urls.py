"""The portal's pages keep the URLs and URL names they always had (templates, e-mails and
bookmarks use them), now served by marketplace.portal."""

from __future__ import annotations

import pytest
from django.urls import resolve, reverse


@pytest.mark.parametrize(
    ("name", "args", "path", "view"),
    [
        ("sellers:portal", [], "/sellers/", "marketplace.portal.views.home"),
        ("portal:orders", [], "/sellers/orders/", "marketplace.portal.order_views.order_list"),
        ("portal:order", [7], "/sellers/orders/7/", "marketplace.portal.order_views.order_detail"),
        (
            "portal:order_live",
            [7],
            "/sellers/orders/7/live/",
            "marketplace.portal.order_views.order_live",
        ),
        (
            "portal_catalog:listings",
            [],
            "/sellers/catalog/",
            "marketplace.portal.catalog_views.listings",
        ),
        (
            "portal_catalog:listing",
            [3],
            "/sellers/catalog/listings/3/",
            "marketplace.portal.catalog_views.listing_detail",
        ),
        (
            "portal_catalog:run",
            [3],
            "/sellers/catalog/runs/3/",
            "marketplace.portal.catalog_views.run_detail",
        ),
        ("sellers:connection", [], "/sellers/connection/", "sellers.views.connection"),
        ("sellers:login", [], "/sellers/login/", "sellers.views.SellerLoginView"),
    ],
)
def test_portal_urls_keep_their_names_and_paths(
    name: str, args: list[int], path: str, view: str
) -> None:
    assert reverse(name, args=args) == path
    match = resolve(path)
    assert match.view_name == name
    assert match._func_path == view
