"""Realistic generated products (deterministic for a seed): the demo catalogs and the large
catalogs for benchmarks. Every value is a string, as in the platform's rows."""

import random
from collections.abc import Iterator

PRODUCT_FIELDS = [
    "id",
    "title",
    "description",
    "brand",
    "gtin",
    "price",
    "sale_price",
    "quantity",
    "condition",
    "image_link",
    "link",
    "product_type",
]

_KINDS = [
    ("Mug", "Home & Garden > Kitchen & Dining > Tableware > Mugs", ("350 ml", "450 ml")),
    ("Teapot", "Home & Garden > Kitchen & Dining > Tableware > Teapots", ("0.8 l", "1.2 l")),
    ("Chef's Knife", "Home & Garden > Kitchen & Dining > Kitchen Tools > Knives", ("20 cm",)),
    ("Cutting Board", "Home & Garden > Kitchen & Dining > Kitchen Tools", ("40 x 30 cm",)),
    ("Desk Lamp", "Home & Garden > Lighting > Lamps", ("LED", "E27")),
    ("Throw Blanket", "Home & Garden > Linens & Bedding > Blankets", ("130 x 170 cm",)),
    ("Backpack", "Luggage & Bags > Backpacks", ("20 l", "28 l")),
    ("Water Bottle", "Sporting Goods > Outdoor Recreation > Bottles", ("500 ml", "750 ml")),
    ("Running Shoes", "Apparel & Accessories > Shoes", ("EU 40", "EU 42", "EU 44")),
    ("Rain Jacket", "Apparel & Accessories > Clothing > Outerwear", ("S", "M", "L", "XL")),
    ("Wireless Mouse", "Electronics > Computers > Input Devices > Mice", ("2.4 GHz",)),
    ("USB-C Cable", "Electronics > Electronics Accessories > Cables", ("1 m", "2 m")),
    ("Notebook", "Office Supplies > Paper Products > Notebooks", ("A5", "A4")),
    ("Plant Pot", "Home & Garden > Lawn & Garden > Planters", ("12 cm", "18 cm")),
]
_BRANDS = [
    "Northwind", "Alder & Co", "Brightline", "Kestrel", "Oakridge", "Nordvik", "Lumen",
    "Fernhill", "Marlow", "Tidewater",
]  # fmt: skip
_MATERIALS = ["Stoneware", "Bamboo", "Recycled", "Steel", "Linen", "Cotton", "Classic", "Pro"]
_COLOURS = ["Black", "White", "Sage", "Navy", "Terracotta", "Sand", "Charcoal", "Red"]
_CONDITIONS = ["new"] * 17 + ["refurbished"] * 2 + ["used"]


def gtin13(rng: random.Random) -> str:
    """A 13-digit GTIN with a valid check digit (prefix 40-44: Germany's range)."""
    body = f"{rng.randint(40, 44)}{rng.randint(0, 10**10 - 1):010d}"
    total = sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(body))
    return body + str((10 - total % 10) % 10)


def product_rows(
    *, count: int, seed: int, sku_prefix: str, shop: str, start: int = 1
) -> Iterator[dict[str, str]]:
    rng = random.Random(seed)
    for number in range(start, start + count):
        kind, product_type, sizes = rng.choice(_KINDS)
        brand, material, colour = rng.choice(_BRANDS), rng.choice(_MATERIALS), rng.choice(_COLOURS)
        size = rng.choice(sizes)
        sku = f"{sku_prefix}-{number:06d}"
        price = rng.randint(399, 18999) / 100
        sale = f"{price * rng.choice((0.8, 0.85, 0.9)):.2f}" if rng.random() < 0.2 else ""
        yield {
            "id": sku,
            "title": f"{brand} {material} {kind} {size}, {colour}",
            "description": (
                f"{material} {kind.lower()} by {brand} in {colour.lower()}, {size}. "
                f"Sold by {shop}; ships in recyclable packaging."
            ),
            "brand": brand,
            "gtin": gtin13(rng),
            "price": f"{price:.2f}",
            "sale_price": sale,
            "quantity": str(rng.choice((0, rng.randint(1, 250), rng.randint(1, 40)))),
            "condition": rng.choice(_CONDITIONS),
            "image_link": f"https://images.{shop}.example/products/{sku}.jpg",
            "link": f"https://www.{shop}.example/p/{sku.lower()}",
            "product_type": product_type,
        }
