"""Reads for the seller's own pages: one seller's orders, and what the portal home leads
with. Every read is scoped to the seller; another seller's order is simply not found."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, QuerySet

from marketplace.orders.models import Order, ValidationProblem
from marketplace.orders.selectors import (
    open_problems_count,
    order_detail_queryset,
    with_open_problems,
)
from marketplace.portal.problem_help import problem_help
from sellers.models import Seller

# Problems listed on the portal home (the total is shown too).
TODO_LIMIT = 10


def seller_order_list(
    *, seller: Seller, search: str = "", has_problems: bool = False
) -> QuerySet[Order]:
    """One seller's orders with sync row, shipments and open-problem count (for a page)."""
    orders = (
        Order.objects.filter(seller=seller)
        .select_related("sync")
        .prefetch_related("lines__shipments")
        .annotate(open_problems=open_problems_count())
        .order_by("-created_at", "-id")
    )
    if search:
        orders = orders.filter(mp_order_number__icontains=search)
    if has_problems:
        orders = with_open_problems(orders)
    return orders


@dataclass(frozen=True)
class ProblemToFix:
    problem: ValidationProblem
    title: str


@dataclass(frozen=True)
class SellerTodo:
    """What the portal home leads with: the seller's open problems, newest first."""

    problems: list[ProblemToFix]
    problems_total: int
    orders_with_problems: int


def seller_todo(*, seller: Seller, limit: int = TODO_LIMIT) -> SellerTodo:
    open_problems = ValidationProblem.objects.filter(order__seller=seller, resolved_at__isnull=True)
    totals = open_problems.aggregate(n=Count("id"), orders=Count("order", distinct=True))
    rows = open_problems.select_related("order").order_by("-first_seen_at", "-id")[:limit]
    return SellerTodo(
        problems=[ProblemToFix(problem, problem_help(problem.code).title) for problem in rows],
        problems_total=totals["n"],
        orders_with_problems=totals["orders"],
    )


def seller_order_get(*, seller: Seller, order_id: int) -> Order | None:
    """The order only if it is this seller's: another seller's id is simply not found."""
    return order_detail_queryset().filter(seller=seller, pk=order_id).first()
