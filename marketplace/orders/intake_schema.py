"""The intake body of an order: validated by the API and by ``demo_orders`` alike.

Field names follow the platform's order contract (``customer``, ``shipping_address``,
``order_lines``, ``marketplace_state``) so a back office that knows one knows both.
Unknown fields are refused: a typo must not silently drop data.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

CENT = Decimal("0.01")

Text = Annotated[str, Field(max_length=200)]
Money = Annotated[Decimal, Field(ge=0, max_digits=12, decimal_places=2)]
# Order numbers appear in URL paths here and at the platform.
OrderNumber = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[^/\s?#%]+$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class CustomerIn(_Strict):
    full_name: Annotated[str, Field(min_length=1, max_length=200)]
    # Required: the platform needs an address to reach the buyer.
    email: Annotated[str, Field(max_length=254, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")]
    phone: Annotated[str, Field(max_length=40)] | None = None
    vat: Annotated[str, Field(max_length=40)] | None = None


class AddressIn(_Strict):
    full_name: Annotated[str, Field(min_length=1, max_length=200)]
    address1: Annotated[str, Field(min_length=1, max_length=200)]
    address2: Text | None = None
    address3: Text | None = None
    city: Annotated[str, Field(min_length=1, max_length=100)]
    state: Annotated[str, Field(max_length=100)] | None = None
    postal_code: Annotated[str, Field(min_length=1, max_length=20)]
    country_code: Annotated[str, Field(pattern=r"^[A-Z]{3}$", description="ISO 3166 alpha-3")]
    country_code_iso2: Annotated[str, Field(pattern=r"^[A-Z]{2}$")] | None = None
    address_type: Literal["residential", "business"] | None = None
    phone: Annotated[str, Field(max_length=40)] | None = None


class TaxIn(_Strict):
    type: Annotated[str, Field(min_length=1, max_length=40)]
    amount: Money


class DiscountIn(_Strict):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    amount: Money
    type: Annotated[str, Field(min_length=1, max_length=40)]


class OrderLineIn(_Strict):
    mp_line_number: Annotated[str, Field(min_length=1, max_length=128)]
    sku: Annotated[str, Field(min_length=1, max_length=128)]
    product_name: Annotated[str, Field(min_length=1, max_length=300)]
    quantity: Annotated[int, Field(ge=1, le=100_000)]
    unit_price: Money
    shipping_method: Annotated[str, Field(max_length=64)] | None = None
    shipping_price: Money = Decimal("0.00")
    taxes: list[TaxIn] = Field(default_factory=list, max_length=20)
    discounts: list[DiscountIn] = Field(default_factory=list, max_length=20)


class OrderIn(_Strict):
    mp_order_number: OrderNumber
    seller: Annotated[str, Field(min_length=1, max_length=150, description="The seller's username")]
    marketplace_state: Literal["PENDING", "AWAITING_SHIPMENT"] = Field(
        default="AWAITING_SHIPMENT",
        description="Orders enter as PENDING or AWAITING_SHIPMENT; SHIPPED is set by settlement.",
    )
    sales_channel: Annotated[str, Field(min_length=1, max_length=64)]
    purchase_date: AwareDatetime
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$", description="ISO 4217")]
    location: Annotated[str, Field(max_length=128)] | None = None
    customer: CustomerIn
    shipping_address: AddressIn
    order_lines: list[OrderLineIn] = Field(min_length=1, max_length=200)
    delivery_notes: Annotated[str, Field(max_length=2000)] | None = None
    earliest_ship_date: AwareDatetime | None = None
    latest_ship_date: AwareDatetime | None = None
    earliest_delivery_date: AwareDatetime | None = None
    latest_delivery_date: AwareDatetime | None = None

    @field_validator("currency", mode="before")
    @classmethod
    def _upper_currency(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value


class StateIn(_Strict):
    state: Literal["PENDING", "AWAITING_SHIPMENT", "SHIPPED", "CANCELLED"]


def cross_field_errors(data: OrderIn) -> dict[str, list[str]]:
    """Rules spanning several fields (pydantic reports per field; these need the whole body)."""
    errors: dict[str, list[str]] = {}
    seen: set[str] = set()
    for index, line in enumerate(data.order_lines):
        if line.mp_line_number in seen:
            errors[f"order_lines.{index}.mp_line_number"] = ["duplicate line number"]
        seen.add(line.mp_line_number)

    def window(start: str, end: str) -> None:
        first: datetime | None = getattr(data, start)
        last: datetime | None = getattr(data, end)
        if first and last and first > last:
            errors[end] = [f"must not be before {start}"]

    window("earliest_ship_date", "latest_ship_date")
    window("earliest_delivery_date", "latest_delivery_date")
    return errors
