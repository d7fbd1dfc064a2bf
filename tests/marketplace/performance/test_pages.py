"""The staff and seller pages read the stored figures: values, links to the orders behind
them, the chart, the sellers list sorted and filtered by a measure; a seller sees only
their own figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from marketplace import glossary
from marketplace.performance.measures import MEASURES
from marketplace.performance.refresh import scorecards_refresh
from tests.marketplace.performance.builders import NOW, Sellers, known_data
from tests.support.app_fixtures import signed_in
from tests.support.factories import StaffUserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(settings: Any) -> Sellers:
    settings.PERFORMANCE_MIN_SAMPLE = 1
    sellers = known_data()
    scorecards_refresh(now=NOW)
    return sellers


def test_staff_see_a_sellers_measures_chart_and_the_link_to_the_late_orders(world: Sellers) -> None:
    staff = signed_in(StaffUserFactory())
    response = staff.get(f"/dashboard/performance/sellers/{world.alice.id}/?window=30")
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="measure-late_shipment" class="over"' in page
    assert "50.0\u00a0%" in page
    assert "2 of 4" in page  # late of due
    assert 'data-flag="late_shipment"' in page
    assert f'href="/dashboard/performance/sellers/{world.alice.id}/orders/late/?window=30"' in page
    assert '<svg class="chart trend"' in page
    assert "style=" not in page.split('<svg class="chart trend"')[1].split("</svg>")[0]
    # What each measure counts is written on the page
    assert "after the ship-by day" in page


def test_staff_open_the_late_orders_behind_the_number(world: Sellers) -> None:
    staff = signed_in(StaffUserFactory())
    response = staff.get(f"/dashboard/performance/sellers/{world.alice.id}/orders/late/?window=30")
    assert response.status_code == 200
    page = response.content.decode()
    assert "A-2" in page
    assert "A-4" in page
    assert "A-1" not in page
    assert (
        staff.get(f"/dashboard/performance/sellers/{world.alice.id}/orders/nonsense/").status_code
        == 404
    )


def test_the_sellers_list_sorts_and_filters_by_a_measure(world: Sellers) -> None:
    staff = signed_in(StaffUserFactory())
    response = staff.get("/dashboard/sellers/?sort=-late_shipment")
    assert response.status_code == 200
    page = response.content.decode()
    assert page.index("Alice&#x27;s Shop") < page.index("Bob&#x27;s Shop")
    assert "data-flagged" in page
    flagged = staff.get("/dashboard/sellers/?flagged=late_shipment").content.decode()
    assert "Alice&#x27;s Shop" in flagged
    assert "Bob&#x27;s Shop" not in flagged
    best_first = staff.get("/dashboard/sellers/?sort=late_shipment").content.decode()
    assert best_first.index("Bob&#x27;s Shop") < best_first.index("Alice&#x27;s Shop")


def test_a_seller_sees_their_own_figures_and_what_to_do(world: Sellers) -> None:
    alice = signed_in(world.alice.user)
    response = alice.get("/sellers/performance/?window=30")
    assert response.status_code == 200
    page = response.content.decode()
    assert "50.0\u00a0%" in page
    assert "What you can do:" in page
    assert 'href="/sellers/performance/orders/late/?window=30"' in page
    late = alice.get("/sellers/performance/orders/late/?window=30").content.decode()
    assert "A-2" in late


def test_both_pages_show_the_authorization_wait_next_to_the_returns_waiting(
    world: Sellers,
) -> None:
    # Alice's 30-day window: 1 return waiting, 3 authorized after 1, 3 and 10 days.
    staff = signed_in(StaffUserFactory())
    pages = {
        "staff": staff.get(f"/dashboard/performance/sellers/{world.alice.id}/?window=30"),
        "seller": signed_in(world.alice.user).get("/sellers/performance/?window=30"),
    }
    for who, response in pages.items():
        assert response.status_code == 200, who
        page = response.content.decode()
        waiting = page.index('id="measure-returns_overdue"')
        median = page.index('id="measure-authorization_days_median" class="over"')
        p90 = page.index('id="measure-authorization_days_p90" class="over"')
        assert waiting < median < p90, who
        row = page[median:p90]
        assert "3.0\u00a0days" in row, who
        assert "≤&nbsp;2.0\u00a0days" in row, who
        assert "3 authorized" in row, who
        assert "the day the marketplace first saw it authorized" in row, who
        assert "8.6\u00a0days" in page[p90:], who
    assert "Authorize return requests the day they arrive" in pages["seller"].content.decode()


def test_a_seller_never_sees_another_sellers_figures_or_orders(world: Sellers) -> None:
    bob = signed_in(world.bob.user)
    page = bob.get("/sellers/performance/?window=30").content.decode()
    assert "50.0\u00a0%" not in page  # Alice's late rate
    assert "0.0\u00a0%" in page  # Bob's own
    late = bob.get("/sellers/performance/orders/late/?window=90").content.decode()
    assert "A-2" not in late
    assert "A-4" not in late
    # The staff pages are not theirs
    response = bob.get(f"/dashboard/performance/sellers/{world.alice.id}/")
    assert response.status_code == 403


def test_anonymous_visitors_are_sent_to_sign_in(world: Sellers, client: Any) -> None:
    assert client.get("/sellers/performance/").status_code == 302
    assert client.get(f"/dashboard/performance/sellers/{world.alice.id}/").status_code == 302


def test_the_sellers_page_speaks_plainly(world: Sellers) -> None:
    page = signed_in(world.alice.user).get("/sellers/performance/").content.decode().lower()
    for word in glossary.ENGINEER_WORDS:
        assert word not in page, word
    assert "return_authorization_days" not in page
    assert "more than 14 days after the buyer asked" in page
    assert "handling time of 2 days" in page


def test_every_measure_is_defined_in_the_readme() -> None:
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    section = readme.split("## Seller performance", 1)[1].split("\n## ", 1)[0]
    for measure in MEASURES:
        assert measure.label.split(",")[0] in section, measure.label
        assert str(measure.key) in str(settings.PERFORMANCE_THRESHOLDS)
