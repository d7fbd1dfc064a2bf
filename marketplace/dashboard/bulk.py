"""The dashboard's bulk actions: retry many orders, pull or disconnect many sellers at once
(in an outage staff retry what failed in one action, not one by one).

Each item goes through the same service as its single button, and each is recorded as
its own ``StaffAction`` (the order's or seller's page shows it); the outcome sums them
up in one sentence. A selection is capped at ``BULK_LIMIT``: it comes from one page of
a list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from django.contrib.auth.models import User

from marketplace.dashboard import services
from marketplace.dashboard.models import StaffAction
from marketplace.orders.models import Order, OrderSync
from marketplace.orders.services.push_recovery import order_sync_retry
from marketplace.staff_confirm import Outcome
from sellers.models import Seller

BULK_LIMIT = 200
Status = OrderSync.Status


def selected_ids(values: Iterable[str]) -> list[int]:
    """The ticked ids of a bulk form (anything that is not a positive number is dropped),
    in order, without repeats, at most ``BULK_LIMIT``."""
    ids: list[int] = []
    for value in values:
        if value.isdigit() and int(value) > 0 and int(value) not in ids:
            ids.append(int(value))
    return ids[:BULK_LIMIT]


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def staff_orders_retry(*, order_ids: list[int], actor: User) -> Outcome:
    """Push each selected order again now. An order already up to date is left alone."""
    orders = {o.id: o for o in Order.objects.filter(pk__in=order_ids).only("id", "seller_id")}
    # Already on the platform as they are: nothing to send (said apart, not as "pushed").
    up_to_date = {
        sync.order_id
        for sync in OrderSync.objects.filter(order_id__in=orders, status=Status.SYNCED)
        if sync.is_up_to_date
    }
    for order_id in orders:
        if order_id in up_to_date:
            continue
        # One short transaction per order (its row lock, its history event, its wake-up).
        order_sync_retry(order_id=order_id, actor=actor.get_username())
    # Read back once: with a fast worker (or eager tasks) many have been pushed already.
    syncs = {s.order_id: s for s in OrderSync.objects.filter(order_id__in=orders)}
    tally: Counter[str] = Counter()
    records = []
    for order_id, order in orders.items():
        sync = syncs.get(order_id)
        status = "up_to_date" if order_id in up_to_date else (sync.status if sync else "")
        tally[status] += 1
        failed = status in (Status.FAILED, Status.WAITING_FOR_CONNECTION)
        records.append(
            StaffAction(
                kind=StaffAction.Kind.ORDER_RETRY,
                actor=actor,
                actor_username=actor.get_username(),
                seller_id=order.seller_id,
                order_id=order_id,
                ok=not failed,
                result=(
                    "Already up to date; nothing sent."
                    if status == "up_to_date"
                    else f"Retried in a bulk action of {len(orders)}; now "
                    f"{sync.get_status_display().lower() if sync else 'unknown'}."
                )[:500],
            )
        )
    StaffAction.objects.bulk_create(records)
    if not orders:
        return Outcome(False, "No order was selected.")
    parts = [f"Retried {_plural(len(orders), 'order', 'orders')}:"]
    words = [
        ("up_to_date", "already up to date"),
        (Status.SYNCED, "pushed"),
        (Status.PENDING, "queued"),
        (Status.RETRYING, "retrying"),
        (Status.FAILED, "failed again"),
        (Status.WAITING_FOR_CONNECTION, "waiting for the seller's connection"),
    ]
    parts.append(", ".join(f"{tally[status]} {word}" for status, word in words if tally[status]))
    bad = tally[Status.FAILED] + tally[Status.WAITING_FOR_CONNECTION]
    return Outcome(ok=bad == 0, message=" ".join(parts) + ".")


def staff_sellers_pull(*, seller_ids: list[int], actor: User) -> Outcome:
    """Queue a pull of each selected seller (a harmless read: no confirmation)."""
    sellers = list(Seller.objects.filter(pk__in=seller_ids).order_by("display_name", "id"))
    actions = [services.staff_seller_pull(seller=seller, actor=actor) for seller in sellers]
    if not actions:
        return Outcome(False, "No seller was selected.")
    queued = [a for a in actions if a.ok]
    skipped = [s.display_name for s, a in zip(sellers, actions, strict=True) if not a.ok]
    message = f"Pull queued for {_plural(len(queued), 'seller', 'sellers')}."
    if skipped:
        message += (
            f" Not pulled (their platform connection is not live): {', '.join(skipped[:10])}"
            + (f" and {len(skipped) - 10} more." if len(skipped) > 10 else ".")
        )
    return Outcome(ok=not skipped, message=message)


def staff_sellers_disconnect(*, seller_ids: list[int], actor: User) -> Outcome:
    sellers = list(Seller.objects.filter(pk__in=seller_ids).order_by("display_name", "id"))
    actions = [
        services.staff_connection_disconnect(seller=seller, actor=actor) for seller in sellers
    ]
    done = sum(1 for a in actions if a.ok)
    if not actions:
        return Outcome(False, "No seller was selected.")
    message = f"Disconnected {_plural(done, 'seller', 'sellers')}; their stored tokens were wiped."
    if done < len(actions):
        message += f" {len(actions) - done} had no connection."
    return Outcome(ok=done > 0, message=message)
