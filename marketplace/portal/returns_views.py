"""The seller's returns page: buyers' returns waiting for the seller's authorization
(overdue ones first), refunds paused for the seller to correct and returns the
marketplace refused, in plain words."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from marketplace.portal.problem_help import REFUND_FALLBACK, REFUND_HELP, ProblemHelp
from marketplace.returns.selectors import seller_returns_waiting
from sellers.access import SellerRequest, seller_required


def _explained(errors: list[dict[str, Any]]) -> list[tuple[dict[str, Any], ProblemHelp]]:
    # "problem" is our own code when the platform was sent its catch-all "OTHER".
    return [
        (error, REFUND_HELP.get(error.get("problem") or error.get("code", ""), REFUND_FALLBACK))
        for error in errors
    ]


@require_GET
@seller_required
def returns(request: SellerRequest) -> HttpResponse:
    data = seller_returns_waiting(seller_id=request.seller.pk)
    return render(
        request,
        "portal/returns.html",
        {
            "overdue": data["overdue"],
            "authorization_days": settings.RETURN_AUTHORIZATION_DAYS,
            "awaiting": data["awaiting"],
            "paused_refunds": [(r, _explained(r.errors or [])) for r in data["paused_refunds"]],
            "refused_returns": [(r, _explained(r.errors or [])) for r in data["refused_returns"]],
        },
    )
