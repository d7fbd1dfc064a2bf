"""Staff see a seller whose pulls keep failing, and where the next pull stands."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from tests.support.app_fixtures import page_text
from tests.support.factories import SellerSyncFactory

pytestmark = pytest.mark.django_db


def test_a_seller_whose_pulls_keep_failing_is_on_the_overview(
    staff_client: Client, seller: Any, other_seller: Any, settings: Any
) -> None:
    settings.PULL_FAILING_AFTER = 3
    SellerSyncFactory(
        seller=seller, consecutive_failures=4, last_error="listing page failed: HTTP 503"
    )
    SellerSyncFactory(seller=other_seller, consecutive_failures=1)
    page = page_text(staff_client.get(reverse("dashboard:overview")))
    assert "Pulls that keep failing" in page
    section = page.split("Pulls that keep failing")[1]
    assert escape(seller.display_name) in section
    assert "4 failed pulls in a row" in page
    # One failure is not yet "keeps failing".
    assert escape(other_seller.display_name) not in section


def test_no_failing_pulls_no_section(staff_client: Client, seller: Any) -> None:
    SellerSyncFactory(seller=seller, consecutive_failures=0)
    page = page_text(staff_client.get(reverse("dashboard:overview")))
    assert 'id="overview-live"' in page  # the overview itself, not an error page
    assert "Pulls that keep failing" not in page


def test_the_seller_page_says_where_the_next_pull_resumes_and_what_it_reads_again(
    staff_client: Client, seller: Any
) -> None:
    SellerSyncFactory(
        seller=seller,
        consecutive_failures=2,
        resume_cursor="c:abc+/=",
        resume_since=timezone.now(),
        resume_started_at=timezone.now(),
        retry_numbers=["MP-7", "MP-9"],
        last_error="listing page failed after 4 attempts",
    )
    page = page_text(staff_client.get(reverse("dashboard:seller", args=[seller.id])))
    assert "2 pulls" in page
    assert "continues the interrupted listing" in page
    assert "MP-7, MP-9" in page
