"""After a restore, the orders (``after_restore.py``, step 1): the platform's orders
imported since the backup, and the ones we hold open; an order we lack is rebuilt from the
platform's record, one we hold behind it takes its state and fulfillments through the
pull's store (``orders/services/adopt.py``)."""

from __future__ import annotations

from typing import Any

from marketplace.orders.models import MarketplaceState, Order
from marketplace.orders.services.adopt import (
    RecordUnreadable,
    order_adopt,
    order_platform_state_take,
    state_ahead,
)
from marketplace.orders.services.fulfillment import fulfillment_digest
from marketplace.orders.services.pull import listed_fulfillment_body
from marketplace.reconcile import kinds
from marketplace.reconcile.models import FindingAction
from marketplace.reconcile.restore_pass import PAGE_SIZE, RestorePass, chunks

OPEN_STATES = (MarketplaceState.PENDING, MarketplaceState.AWAITING_SHIPMENT)


class OrdersStep(RestorePass):
    def orders(self) -> None:
        since = self.result.since
        listed: dict[str, dict[str, Any]] = {}
        pages = self.client.iter_order_pages(imported_after=since, page_size=PAGE_SIZE)
        for record in self.pages(pages, "orders"):
            listed[str(record.get("mp_order_number") or "")] = record
        held_open = sorted(
            set(
                Order.objects.filter(seller_id=self.seller_id, state__in=OPEN_STATES).values_list(
                    "mp_order_number", flat=True
                )
            )
            - set(listed)
        )
        for chunk in chunks(held_open):
            pages = self.client.iter_order_pages(mp_order_numbers=chunk, page_size=PAGE_SIZE)
            for record in self.pages(pages, "orders"):
                listed[str(record.get("mp_order_number") or "")] = record
        self.result.compared["orders"] = len(listed)
        ours = {
            o.mp_order_number: o
            for o in Order.objects.filter(seller_id=self.seller_id, mp_order_number__in=listed)
        }
        for number, record in sorted(listed.items()):
            if number:
                self._order(number, record, ours.get(number))

    def _order(self, number: str, record: dict[str, Any], order: Order | None) -> None:
        theirs = {
            "state": record.get("marketplace_state"),
            "fulfillment_status": record.get("status"),
        }
        if order is None:
            try:
                order_adopt(seller_id=self.seller_id, record=record)
            except (RecordUnreadable, ValueError) as exc:
                action = FindingAction.STAFF
                note = f"cannot rebuild it from the platform's record: {exc}"
            else:
                self.result.orders_rebuilt += 1
                action = FindingAction.RECORDED
                note = "rebuilt from the platform's record; not pushed again"
            self.found(
                kinds.RESTORE_ORDER_LOST,
                "order",
                number,
                ours={},
                theirs=theirs,
                action=action,
                note=note,
            )
            return
        state = str(record.get("marketplace_state") or "")
        body = listed_fulfillment_body(record)
        digest_differs = body is not None and fulfillment_digest(body) != order.fulfillment_digest
        ours = {"state": order.state, "fulfillment_digest": order.fulfillment_digest}
        if state != order.state and not state_ahead(order.state, state):
            if state_ahead(state, order.state):
                return  # the platform is behind us: our outbox row still sends it
            self.found(
                kinds.RESTORE_ORDER_BEHIND,
                "order",
                number,
                ours=ours,
                theirs=theirs,
                action=FindingAction.STAFF,
                note="both sides moved: neither state follows from the other",
            )
            return
        if state == order.state and not digest_differs:
            return
        order_platform_state_take(order_id=order.pk, record=record)
        self.result.orders_caught_up += 1
        self.found(
            kinds.RESTORE_ORDER_BEHIND,
            "order",
            number,
            ours=ours,
            theirs=theirs,
            action=FindingAction.PULL_FORCED,
            note="the platform's state and fulfillments taken through the pull's store",
        )
