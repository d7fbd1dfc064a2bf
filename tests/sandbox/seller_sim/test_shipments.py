"""The simulated seller's shipments: good ones pass the marketplace's checks, each bad kind
carries exactly its named problem (the names shared with shipping by hand)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from marketplace.orders.validation import TRACKING_FORMATS, canonical_carrier
from sandbox.common.carriers import CARRIERS
from sandbox.seller_sim.behaviour import BAD_KINDS, Behaviour
from sandbox.seller_sim.client import OrderApi
from sandbox.seller_sim.seller import SimulatedSeller


@pytest.fixture
def seller() -> SimulatedSeller:
    api = OrderApi("http://127.0.0.1:9", "user", "pass", "100001")  # never called here
    return SimulatedSeller("s1", api, Behaviour(), seed=3)


def _looks_good(shipment: dict[str, str]) -> dict[str, bool]:
    carrier = canonical_carrier(shipment["carrier"])
    shipped = datetime.fromisoformat(shipment["shipped_date"])
    return {
        "carrier": carrier is not None,
        "tracking_number": carrier is not None
        and bool(TRACKING_FORMATS[carrier][0].fullmatch(shipment["tracking_number"])),
        "shipped_date": shipped <= datetime.now(UTC) + timedelta(minutes=1),
    }


@pytest.mark.parametrize("carrier", CARRIERS)
def test_a_good_shipment_passes_every_check(seller: SimulatedSeller, carrier: str) -> None:
    shipment = seller._shipment(carrier, None)

    assert shipment["carrier"] == carrier
    assert _looks_good(shipment) == {"carrier": True, "tracking_number": True, "shipped_date": True}


@pytest.mark.parametrize(
    ("bad", "failing"),
    [
        ("unknown_carrier", {"carrier", "tracking_number"}),
        ("bad_tracking_number", {"tracking_number"}),
        ("future_shipped_date", {"shipped_date"}),
    ],
)
def test_each_bad_kind_breaks_what_it_names(
    seller: SimulatedSeller, bad: str, failing: set[str]
) -> None:
    assert bad in BAD_KINDS

    checks = _looks_good(seller._shipment("UPS", bad))

    assert {name for name, ok in checks.items() if not ok} == failing
