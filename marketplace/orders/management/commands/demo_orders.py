"""``manage.py demo_orders --seller <username> --count N``: realistic orders via intake."""

from __future__ import annotations

import random
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from tqdm import tqdm

from marketplace.orders.errors import OrderError
from marketplace.orders.intake_schema import CENT, OrderIn
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
PRODUCTS = [
    ("MUG-RED", "Red mug", "12.50"),
    ("MUG-BLUE", "Blue mug", "12.50"),
    ("TEE-M", "T-shirt, size M", "19.90"),
    ("CAP-01", "Baseball cap", "15.00"),
    ("BOOK-TAOCP", "The Art of Computer Programming, Vol. 1", "64.99"),
]


def demo_order_body(*, seller: str, number: str, rng: random.Random) -> dict[str, Any]:
    city, postal, alpha3, alpha2, channel, currency = rng.choice(PLACES)
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    lines = []
    for index, (sku, product, price) in enumerate(rng.sample(PRODUCTS, rng.randint(1, 3)), 1):
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
    return {
        "mp_order_number": number,
        "seller": seller,
        # Most orders arrive paid; a few still wait for payment.
        "marketplace_state": "PENDING" if rng.random() < 0.1 else "AWAITING_SHIPMENT",
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
    help = "Create realistic demo orders for a seller through the intake service."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--seller", required=True, help="the seller's username")
        parser.add_argument("--count", type=int, default=10)
        parser.add_argument("--prefix", default="DEMO")
        parser.add_argument("--seed", type=int, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        username = options["seller"]
        if not Seller.objects.filter(user__username=username).exists():
            raise CommandError(f"no seller with username {username!r}")
        rng = random.Random(options["seed"])
        stamp = timezone.now().strftime("%Y%m%d%H%M%S")
        created = 0
        for index in tqdm(range(options["count"]), desc="orders", unit="order"):
            number = f"{options['prefix']}-{stamp}-{index + 1:05d}"
            body = demo_order_body(seller=username, number=number, rng=rng)
            try:
                _, is_new = order_create(data=OrderIn.model_validate(body), actor="demo_orders")
            except OrderError as exc:
                raise CommandError(f"order {number}: {exc}") from exc
            created += int(is_new)
        self.stdout.write(self.style.SUCCESS(f"{created} order(s) created for {username}"))
