"""Everything waiting for the seller, in one place: the portal home's "What needs you"
and the e-mail digest read it. Four kinds, each a list of items with a stable key (the
digest sends only when a key is new) and the page where it is fixed:

- ``connection``: the platform connection is lost (the seller connects again);
- ``problems``: a fulfillment problem on an order (one item per order, naming its lines);
- ``returns``: a buyer's return waiting for the seller's answer;
- ``listings``: a product the marketplace refused, with the reason.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Final

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.urls import reverse

from marketplace import glossary
from marketplace.catalog.models import Listing, RejectedSku
from marketplace.orders.models import ValidationProblem
from marketplace.portal.problem_help import problem_help
from marketplace.returns.models import Decision, Return, ReturnStatus
from marketplace.templatetags.display import format_time
from sellers.models import PlatformConnection, Seller

KINDS: Final[tuple[str, ...]] = ("connection", "problems", "returns", "listings")
LOST: Final = (PlatformConnection.State.NEEDS_REAUTH, PlatformConnection.State.DISCONNECTED)
# Items named per kind (the totals are always given; the pages list every one).
SHOWN = 10


@dataclass(frozen=True)
class NeedItem:
    key: str
    text: str
    url: str


@dataclass
class NeedsYou:
    items: dict[str, list[NeedItem]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.totals.values())

    def keys(self, kinds: tuple[str, ...] = KINDS) -> set[str]:
        return {item.key for kind in kinds for item in self.items.get(kind, [])}


def _problems(seller: Seller) -> tuple[list[NeedItem], int]:
    rows = (
        ValidationProblem.objects.filter(order__seller=seller, resolved_at__isnull=True)
        .select_related("order")
        .order_by("-first_seen_at", "-id")
    )
    by_order: dict[int, list[ValidationProblem]] = defaultdict(list)
    for problem in rows[:500]:
        by_order[problem.order_id].append(problem)
    items = []
    for problems in by_order.values():
        order = problems[0].order
        titles = sorted({problem_help(p.code).title for p in problems})
        lines = sorted({p.mp_line_number for p in problems if p.mp_line_number})
        on_lines = f" (line{'s' if len(lines) > 1 else ''} {', '.join(lines)})" if lines else ""
        items.append(
            NeedItem(
                key="problem:" + ",".join(str(p.pk) for p in sorted(problems, key=lambda p: p.pk)),
                text=f"Order {order.mp_order_number}: {'; '.join(titles)}{on_lines}",
                url=reverse("portal:order", args=[order.pk]) + "#problems",
            )
        )
    return items[:SHOWN], len(items)


def _returns(seller: Seller) -> tuple[list[NeedItem], int]:
    waiting = (
        Return.objects.filter(
            seller=seller, status=ReturnStatus.AWAITING_AUTHORIZATION, decision=Decision.NONE
        )
        .select_related("order")
        .order_by("respond_date", "id")
    )
    items = [
        NeedItem(
            key=f"return:{ret.pk}",
            text=f"Order {ret.order.mp_order_number}: return {ret.mp_return_number} waits for "
            f"your answer by {ret.respond_date.day} {ret.respond_date:%b %Y}",
            url=reverse("portal:order", args=[ret.order_id]) + "#returns",
        )
        for ret in waiting[:SHOWN]
    ]
    return items, waiting.count()


def refused_listings(seller: Seller) -> QuerySet[RejectedSku]:
    return RejectedSku.objects.filter(seller=seller).order_by("-updated_at", "sku")


def _listings(seller: Seller) -> tuple[list[NeedItem], int]:
    refused = refused_listings(seller).annotate(
        listing_id=Listing.objects.filter(seller=seller, sku=OuterRef("sku")).values("pk")[:1]
    )
    items = [
        NeedItem(
            key=f"listing:{row.sku}:{row.run_id}",
            text=f"{row.sku}: {glossary.term('listing_refused').lower()}: {row.reason}",
            url=(
                reverse("portal_catalog:listing", args=[row.listing_id])
                if row.listing_id
                else reverse("portal_catalog:listings") + "?status=refused"
            ),
        )
        for row in refused[:SHOWN]
    ]
    return items, refused.count()


def _connection(seller: Seller) -> tuple[list[NeedItem], int]:
    connection = PlatformConnection.objects.filter(seller=seller).first()
    if connection is None or connection.state not in LOST:
        return [], 0
    since = connection.updated_at
    return [
        NeedItem(
            # One item per lost episode: the next connection's loss is news again.
            key=f"connection:{connection.state}:{connection.connected_at}",
            text=f"{glossary.term('connection_lost')} (since {format_time(since)}). "
            "Orders wait until you do.",
            url=reverse("sellers:connection"),
        )
    ], 1


def seller_needs_you(*, seller: Seller) -> NeedsYou:
    needs = NeedsYou()
    for kind, read in (
        ("connection", _connection),
        ("problems", _problems),
        ("returns", _returns),
        ("listings", _listings),
    ):
        needs.items[kind], needs.totals[kind] = read(seller)
    return needs


def sellers_needing_something() -> QuerySet[Seller]:
    """Sellers with at least one item of any kind (one query), for the digest's sweep."""
    return Seller.objects.filter(
        Exists(
            ValidationProblem.objects.filter(order__seller=OuterRef("pk"), resolved_at__isnull=True)
        )
        | Exists(
            Return.objects.filter(
                seller=OuterRef("pk"),
                status=ReturnStatus.AWAITING_AUTHORIZATION,
                decision=Decision.NONE,
            )
        )
        | Exists(RejectedSku.objects.filter(seller=OuterRef("pk")))
        | Q(connection__state__in=LOST)
    ).order_by("pk")
