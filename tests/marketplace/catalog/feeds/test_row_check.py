"""The feed's row rules (``RowCheck``), made once per header: the fast paths decide as the
slow ones did (urlsplit for links, Decimal for amounts, the GTIN check digit)."""

from __future__ import annotations

import pytest

from marketplace.catalog.feeds.parse import RowCheck

HEADER = ["sku", "price", "quantity", "gtin", "link"]


def check(**values: str) -> tuple[object, ...] | str:
    row = {"sku": "A-1", "price": "1.00", "quantity": "1", "gtin": "", "link": "", **values}
    return RowCheck(HEADER)(2, [row[name] for name in HEADER])


@pytest.mark.parametrize(
    ("link", "ok"),
    [
        ("https://shop.example.com/p/1?x=1#top", True),
        ("http://127.0.0.1:8000/", True),
        ("HTTP://Shop.Example.com/p", True),  # urlsplit lower-cases the scheme
        ("https://exämple.com/p", True),
        ("https://", False),
        ("https:///only/a/path", False),
        ("https://shop.example.com/a b", False),
        ("ftp://shop.example.com/p", False),
        ("javascript:alert(1)", False),
        ("//shop.example.com/p", False),
    ],
)
def test_links_are_http_urls_with_a_host_and_no_space(link: str, ok: bool) -> None:
    result = check(link=link)

    assert isinstance(result, tuple) == ok, result
    if ok:
        assert result[11] == link  # (the record id follows the listing columns)


@pytest.mark.parametrize(
    ("price", "stored"),
    [("12.5", "12.5"), ("12.50 EUR", "12.50"), ("-0.00", "0.00"), ("0", "0.0"), ("٣.5", "3.5")],
)
def test_amounts_are_stored_as_decimal_text(price: str, stored: str) -> None:
    result = check(price=price)

    assert isinstance(result, tuple), result
    assert result[5] == stored


@pytest.mark.parametrize(
    ("price", "reason"),
    [
        ("-0.01", "price -0.01 is negative"),
        ("1,00", "is not an amount with at most 2 decimals"),
        ("1.001", "is not an amount with at most 2 decimals"),
    ],
)
def test_bad_amounts_are_rejected(price: str, reason: str) -> None:
    assert reason in str(check(price=price))


@pytest.mark.parametrize(
    ("gtin", "ok"),
    [("4006381333931", True), ("4006381333932", False), ("96385074", True), ("036000291452", True)],
)
def test_gtins_need_their_check_digit(gtin: str, ok: bool) -> None:
    assert isinstance(check(gtin=gtin), tuple) == ok


def test_a_column_the_header_lacks_reads_as_empty() -> None:
    result = check()

    assert isinstance(result, tuple)
    assert result[1] == ""  # title
    assert result[6] is None  # sale_price
