"""Facts the app and the sandbox must agree on, checked across the process boundary.

The app never imports the sandbox; a test may import both sides. Only sandbox modules that
load without the sandbox's Django apps are imported here (no sandbox models)."""

from __future__ import annotations

import random

import pytest

from marketplace.catalog.feeds.mapping import DEFAULT_MAPPING
from marketplace.orders.validation import (
    TRACKING_FORMATS,
    ProblemCode,
    canonical_carrier,
)
from marketplace.portal.problem_help import FALLBACK, REFUND_HELP, problem_help
from marketplace.returns.problems import RefundProblemCode, platform_code
from sandbox.common import carriers
from sandbox.order_source.returns_validation import REFUND_ERROR_CODES, RETURN_ERROR_CODES
from sandbox.order_source.validation import ERROR_CODES
from sandbox.platform_api.catalog.products import PRODUCT_FIELDS, product_rows
from sandbox.seller_sim.behaviour import BAD_KINDS


@pytest.mark.parametrize("code", list(ProblemCode))
def test_every_problem_code_of_the_app_is_accepted_by_the_sandboxs_error_reports(
    code: ProblemCode,
) -> None:
    assert code.value in ERROR_CODES


@pytest.mark.parametrize("code", list(ProblemCode))
def test_every_problem_code_has_its_own_help_text(code: ProblemCode) -> None:
    help_text = problem_help(code.value)

    assert help_text is not FALLBACK
    assert help_text.title
    assert help_text.explanation
    assert help_text.fix


@pytest.mark.parametrize("code", list(RefundProblemCode))
def test_every_refund_problem_code_is_accepted_where_the_app_reports_it(
    code: RefundProblemCode,
) -> None:
    # EXCESS_ITEM_REFUND only on a seller's refund, EXCESS_REFUND only on a return.
    # Our own codes go to the platform as its catch-all (problems.platform_code).
    if code != RefundProblemCode.EXCESS_REFUND:
        assert platform_code(code) in REFUND_ERROR_CODES
    if code != RefundProblemCode.EXCESS_ITEM_REFUND:
        assert platform_code(code) in RETURN_ERROR_CODES
    help_text = REFUND_HELP[code]
    assert help_text.title
    assert help_text.explanation
    assert help_text.fix


def test_the_default_feed_mapping_reads_exactly_the_demo_catalogs_fields() -> None:
    mapped_fields = {field for _column, field in DEFAULT_MAPPING}

    assert mapped_fields == set(PRODUCT_FIELDS)


@pytest.mark.parametrize("carrier", carriers.CARRIERS)
def test_the_sandboxs_sellers_ship_with_carriers_the_app_accepts(carrier: str) -> None:
    # Both simulated sellers (by hand in the sandbox, and the seller_sim process) use these.
    assert canonical_carrier(carrier) == carrier


@pytest.mark.parametrize("carrier", carriers.CARRIERS)
def test_good_tracking_numbers_match_the_apps_format_and_bad_ones_do_not(carrier: str) -> None:
    pattern, _description = TRACKING_FORMATS[carrier]
    rng = random.Random(7)

    for _ in range(20):
        assert pattern.fullmatch(carriers.tracking_number(carrier, rng.choice))
    assert not pattern.fullmatch(carriers.bad_tracking_number(carrier))


def test_the_unknown_carrier_fault_names_a_carrier_the_app_does_not_know() -> None:
    assert canonical_carrier(carriers.UNKNOWN_CARRIER) is None


def test_the_seller_process_fault_kinds_use_the_one_name_per_kind() -> None:
    assert set(BAD_KINDS) == {"unknown_carrier", "bad_tracking_number", "future_shipped_date"}


@pytest.mark.parametrize(
    ("username", "prefix", "seed"), [("seller", "DS", 1), ("seller2", "SD", 2)]
)
def test_demo_orders_use_the_first_products_of_each_demo_sellers_catalog(
    username: str, prefix: str, seed: int
) -> None:
    # sandbox/platform_api/catalog/demo.py's DEMO_ACCOUNTS (it imports sandbox models, so
    # its values are repeated here): "Demo Seller" DS seed 1, "Second Demo Seller" SD seed 2.
    from marketplace.dashboard.management.commands.demo_orders import DEMO_CATALOG_PRODUCTS

    ours = DEMO_CATALOG_PRODUCTS[username]
    generated = product_rows(count=len(ours), seed=seed, sku_prefix=prefix, shop="shop")
    assert ours == [
        (row["id"], row["title"], row["sale_price"] or row["price"]) for row in generated
    ]
