"""``manage.py demo_orders --seller <username> --count N``: realistic orders via intake.

The orders' SKUs are the seller's active listings once a catalog feed has run, and before
that the first products of the seller's demo catalog at the platform (the ones the feed
will bring), so demo orders match listings once the catalog steps are done. The command
prints each order's number and state (``--quiet``: the numbers only, one per line, for a
shell); ``--paid`` leaves none awaiting payment; ``--wait`` returns once the platform has
every new order.
"""

from __future__ import annotations

import random
import time
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from marketplace.catalog.models import Listing
from marketplace.orders.errors import OrderError
from marketplace.orders.intake_schema import CENT, OrderIn
from marketplace.orders.models import MarketplaceState, OrderSync
from marketplace.orders.services.intake import order_create
from sellers.models import Seller

FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia"]
LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Perlman"]
PLACES = [
    ("London", "N1 9GU", "GBR", "GB", "EU", "GBP"),
    ("Berlin", "10115", "DEU", "DE", "EU", "EUR"),
    ("Austin", "78701", "USA", "US", "US", "USD"),
    ("Toronto", "M5V 2T6", "CAN", "CA", "CA", "CAD"),
]
# The first products of each demo seller's catalog at the platform (the sandbox's
# ``platform_api/catalog/demo.py``: prefix DS for "seller", SD for "seller2"), as its
# generator makes them (tests/test_invariants.py checks they still match): the SKUs the
# catalog feed will bring, so orders made before the feed ran match listings after it.
DEMO_CATALOG_PRODUCTS: dict[str, list[tuple[str, str, str]]] = {
    "seller": [
        ("DS-000001", "Tidewater Bamboo Chef's Knife 20 cm, Terracotta", "166.33"),
        ("DS-000002", "Lumen Classic Mug 450 ml, Black", "91.26"),
        ("DS-000003", "Lumen Steel Mug 350 ml, Charcoal", "176.88"),
        ("DS-000004", "Kestrel Pro Wireless Mouse 2.4 GHz, Terracotta", "140.36"),
        ("DS-000005", "Marlow Classic USB-C Cable 2 m, Navy", "97.10"),
        ("DS-000006", "Lumen Classic USB-C Cable 2 m, Sage", "183.82"),
    ],
    "seller2": [
        ("SD-000001", "Northwind Bamboo Plant Pot 18 cm, White", "59.39"),
        ("SD-000002", "Brightline Classic Wireless Mouse 2.4 GHz, Charcoal", "182.30"),
        ("SD-000003", "Brightline Recycled Running Shoes EU 40, Navy", "9.44"),
        ("SD-000004", "Nordvik Cotton Notebook A4, Sand", "56.80"),
        ("SD-000005", "Nordvik Pro Running Shoes EU 42, Red", "186.69"),
        ("SD-000006", "Oakridge Pro Rain Jacket L, Terracotta", "169.22"),
    ],
}
# How many active listings to choose from (the first ones by SKU: stable across runs).
LISTINGS_USED = 50
# Share of orders that arrive unpaid (PENDING): the seller ships them once they are paid.
UNPAID_SHARE = 0.1
WAIT_POLL_SECONDS = 0.5


def demo_products(seller: Seller) -> tuple[list[tuple[str, str, str]], str]:
    """(sku, product name, unit price) to order from, and where they came from."""
    listings = list(
        Listing.objects.filter(seller=seller, active=True)
        .order_by("sku")
        .values_list("sku", "title", "price", "sale_price")[:LISTINGS_USED]
    )
    if listings:
        products = [
            (sku, title or sku, str(sale if sale is not None else price))
            for sku, title, price, sale in listings
        ]
        return products, f"SKUs of {len(products)} of the seller's active listings"
    username = seller.user.get_username()
    products = DEMO_CATALOG_PRODUCTS.get(username, DEMO_CATALOG_PRODUCTS["seller"])
    return products, (
        "SKUs of the demo catalog at the platform (no active listing yet: "
        "they appear once the seller's catalog feed has run)"
    )


def demo_order_body(
    *,
    seller: str,
    number: str,
    rng: random.Random,
    products: list[tuple[str, str, str]],
    paid: bool = False,
) -> dict[str, Any]:
    city, postal, alpha3, alpha2, channel, currency = rng.choice(PLACES)
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    lines = []
    chosen = rng.sample(products, min(len(products), rng.randint(1, 3)))
    for index, (sku, product, price) in enumerate(chosen, 1):
        lines.append(
            {
                "mp_line_number": str(index),
                "sku": sku,
                "product_name": product,
                "quantity": rng.randint(1, 3),
                "unit_price": price,
                "shipping_method": rng.choice(["standard", "express"]),
                "shipping_price": "4.00",
                "taxes": [{"type": "VAT", "amount": str((Decimal(price) / 5).quantize(CENT))}],
            }
        )
    purchased = timezone.now() - timedelta(minutes=rng.randint(5, 60 * 24))
    unpaid = rng.random() < UNPAID_SHARE and not paid
    return {
        "mp_order_number": number,
        "seller": seller,
        # Most orders arrive paid; a few still wait for payment.
        "marketplace_state": "PENDING" if unpaid else "AWAITING_SHIPMENT",
        "sales_channel": channel,
        "purchase_date": purchased.isoformat(),
        "currency": currency,
        "customer": {
            "full_name": name,
            "email": f"{name.split()[0].lower()}@example.com",
            "phone": "+1 555 0100",
        },
        "shipping_address": {
            "full_name": name,
            "address1": f"{rng.randint(1, 200)} Example Street",
            "city": city,
            "postal_code": postal,
            "country_code": alpha3,
            "country_code_iso2": alpha2,
            "address_type": "residential",
        },
        "order_lines": lines,
        "latest_ship_date": (purchased + timedelta(days=3)).isoformat(),
    }


class Command(BaseCommand):
    help = (
        "Create realistic demo orders for a seller through the intake service and print "
        "their numbers."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--seller", required=True, help="the seller's username")
        parser.add_argument("--count", type=int, default=10)
        parser.add_argument("--prefix", default="DEMO")
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument(
            "--paid",
            action="store_true",
            help=f"every order paid (AWAITING_SHIPMENT); otherwise ~{UNPAID_SHARE:.0%} await "
            "payment (PENDING)",
        )
        parser.add_argument(
            "--wait",
            type=float,
            default=None,
            metavar="SECONDS",
            help="wait up to SECONDS until the platform has every new order (needs the "
            "worker running and the seller connected); exit 1 if it does not",
        )
        parser.add_argument(
            "--quiet", action="store_true", help="print only the order numbers, one per line"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        username = options["seller"]
        seller = Seller.objects.select_related("user").filter(user__username=username).first()
        if seller is None:
            raise CommandError(f"no seller with username {username!r}")
        quiet = options["quiet"]
        rng = random.Random(options["seed"])
        products, source = demo_products(seller)
        stamp = timezone.now().strftime("%Y%m%d%H%M%S")
        numbers: list[str] = []
        for index in range(options["count"]):
            number = f"{options['prefix']}-{stamp}-{index + 1:05d}"
            body = demo_order_body(
                seller=username, number=number, rng=rng, products=products, paid=options["paid"]
            )
            try:
                order, is_new = order_create(data=OrderIn.model_validate(body), actor="demo_orders")
            except OrderError as exc:
                raise CommandError(f"order {number}: {exc}") from exc
            if not is_new:
                continue
            numbers.append(number)
            if quiet:
                self.stdout.write(number)
            elif order.state == MarketplaceState.PENDING:
                self.stdout.write(
                    f"{number}  PENDING  (awaiting payment: the seller ships it once it is paid)"
                )
            else:
                self.stdout.write(f"{number}  {order.state}")
        if not quiet:
            self.stdout.write(
                self.style.SUCCESS(f"{len(numbers)} order(s) created for {username}")
                + f"; lines use {source}."
            )
        if options["wait"] is not None:
            self._wait_pushed(numbers, timeout=options["wait"], quiet=quiet)

    def _wait_pushed(self, numbers: list[str], *, timeout: float, quiet: bool) -> None:
        """Until every order's current version is at the platform, or ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            waiting = [
                number
                for number, status, pushed, desired in OrderSync.objects.filter(
                    order__mp_order_number__in=numbers
                ).values_list(
                    "order__mp_order_number", "status", "pushed_version", "desired_version"
                )
                if status != OrderSync.Status.SYNCED or pushed < desired
            ]
            if not waiting:
                if not quiet:
                    self.stdout.write(f"The platform has all {len(numbers)} order(s).")
                return
            if time.monotonic() >= deadline:
                raise CommandError(
                    f"after {timeout:g} s the platform still lacks {len(waiting)} order(s) "
                    f"(e.g. {waiting[0]}): is the worker running and the seller connected?"
                )
            time.sleep(WAIT_POLL_SECONDS)
