"""The staff catalog page's feed set-up: one select per listing column (the usual platform
fields, or another name typed in the row), schedule hours labelled UTC, and the page says
nothing about an import "above" before there is one."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from marketplace.catalog.feeds.mapping import mapping_default
from marketplace.catalog.staff.forms import FeedForm
from sellers.models import Seller
from tests.support.app_fixtures import page_text
from tests.support.factories import CatalogSourceFactory


def form_data(**changes: str) -> dict[str, str]:
    data = {f"map_{column}": field for column, field in mapping_default().pairs}
    data.update(delimiter="comma", compression="gzip", day="*", hour="2", minute="0")
    data.update(changes)
    return data


def test_the_defaults_make_the_default_mapping() -> None:
    form = FeedForm(form_data())
    assert form.is_valid(), form.errors
    assert form.cleaned_data["mapping"] == mapping_default()


def test_a_column_takes_another_field_or_stays_empty() -> None:
    form = FeedForm(form_data(other_title="Product Name", map_brand=""))
    assert form.is_valid(), form.errors
    pairs = dict(form.cleaned_data["mapping"].pairs)
    assert pairs["title"] == "Product Name"  # the typed name wins over the select
    assert pairs["brand"] == ""  # an empty column, as the platform allows


def test_a_required_column_left_empty_or_a_bad_name_is_refused_with_its_reason() -> None:
    form = FeedForm(form_data(map_price="", other_gtin="bad/name"))
    assert not form.is_valid()
    errors = " ".join(form.non_field_errors())
    assert "'price' needs a field" in errors
    assert "'bad/name' is not a field name" in errors


def test_a_select_offers_only_known_fields() -> None:
    form = FeedForm(form_data(map_sku="<script>"))
    assert not form.is_valid()
    assert "map_sku" in form.errors


@pytest.mark.django_db
def test_the_set_up_form_has_a_select_per_column_and_says_utc(
    seller: Seller, staff_client: Client, staff_user: Any
) -> None:
    CatalogSourceFactory(seller=seller)
    page = page_text(staff_client.get(f"/dashboard/catalog/sellers/{seller.pk}/"))
    for column, _ in mapping_default().pairs:
        assert f'<select name="map_{column}"' in page
        assert f'name="other_{column}"' in page
    assert "<textarea" not in page
    assert "Hour (UTC)" in page
    assert "import above" not in page
