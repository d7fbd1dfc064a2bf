"""A seller's side of the order API v2 in tests: Basic credentials, token and client headers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import requests

from tests.support.sandbox_process import SandboxProcess

ORDER_KEYS = {
    "id", "marketplace_order_number", "customer", "imported_date", "purchase_date", "currency",
    "shipping_address", "order_lines", "marketplace_state", "normalized_marketplace_state",
    "merchant_order_number", "marketplace_name", "sales_channel", "delivery_notes",
    "earliest_ship_date", "latest_ship_date", "earliest_delivery_date", "latest_delivery_date",
    # the reference's further fields (order-v2-contract.md, "beyond this")
    "customer_order_number", "integration_id", "integration_name", "location",
}  # fmt: skip
LINE_KEYS = {
    "id", "marketplace_line_number", "sku", "product_name", "quantity", "unit_price",
    "shipping_method", "shipping_price", "taxes", "discounts",
}  # fmt: skip


@dataclass
class SellerApi:
    sandbox: SandboxProcess
    username: str
    password: str
    client_id: str
    token: str = ""
    http: requests.Session = field(default_factory=requests.Session)

    def get_token(self, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("auth", (self.username, self.password))
        return self.http.get(self.sandbox.api_url + "/get_token", timeout=10, **kwargs)

    def login(self) -> SellerApi:
        response = self.get_token()
        assert response.status_code == 200, response.text
        self.token = response.json()["token"]
        return self

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = {"token": self.token, "client": self.client_id, **kwargs.pop("headers", {})}
        kwargs.setdefault("auth", (self.username, self.password))
        kwargs.setdefault("timeout", 10)
        url = self.sandbox.base_url + "/api/v2" + path
        return self.http.request(method, url, headers=headers, **kwargs)

    def ok(self, method: str, path: str, status: int = 200, **kwargs: Any) -> Any:
        response = self.call(method, path, **kwargs)
        assert response.status_code == status, (response.status_code, response.text)
        return response.json()

    def orders(self, **params: str) -> list[dict[str, Any]]:
        return self.ok("GET", "/orders", params=params)["orders"]

    def ship(
        self, order_id: str, lines: list[tuple[str, int]], **shipment: str
    ) -> requests.Response:
        body = {
            "fulfillment_type": "shipment",
            "fulfillment_lines": [{"line_id": i, "quantity": q} for i, q in lines],
            "shipment": {
                "shipped_date": "2024-04-20T10:00:00+02:00",
                "carrier": "UPS",
                "tracking_number": "1Z999AA10123456784",
                **shipment,
            },
        }
        return self.call("POST", f"/orders/{order_id}/fulfillments", json=body)

    def cancel(
        self, order_id: str, lines: list[tuple[str, int]], reason: str = "out_of_stock"
    ) -> requests.Response:
        body = {
            "cancellation_lines": [{"line_id": i, "quantity": q} for i, q in lines],
            "reason": reason,
        }
        return self.call("POST", f"/orders/{order_id}/cancellations", json=body)


def seller_api(sandbox: SandboxProcess, seller: str, client_id: str = "424242") -> SellerApi:
    """An order-API user for ``seller`` (created through the control API) with a token."""
    sandbox.create_api_user(seller, f"{seller}-api", f"{seller}-api-pw", client_id)
    return SellerApi(sandbox, f"{seller}-api", f"{seller}-api-pw", client_id).login()
