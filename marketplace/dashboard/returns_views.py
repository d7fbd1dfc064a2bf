"""Staff pages of returns and refunds: what waits on someone, with retry (a platform call,
a listed record that could not be stored)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from marketplace.access import StaffRequest, staff_required
from marketplace.returns import selectors
from marketplace.returns.services.ledger import step_retry_by_staff
from marketplace.returns.services.record_problems import record_problem_retry
from marketplace.sync.selectors import after_sale_listing_failures


@require_GET
@staff_required
def returns_waiting(request: HttpRequest) -> HttpResponse:
    context = selectors.returns_waiting()
    context["listing_failures"] = after_sale_listing_failures()
    context["authorization_days"] = settings.RETURN_AUTHORIZATION_DAYS
    return render(request, "dashboard/returns_waiting.html", context)


@require_POST
@staff_required
def step_retry(request: StaffRequest, step_id: int) -> HttpResponse:
    # A retry is harmless (every step is idempotent at the platform): no confirmation.
    # Logged with who and when (the money log), like every staff action on money.
    if step_retry_by_staff(step_id=step_id, actor=request.user.get_username()):
        messages.success(request, "Queued: the platform call is sent again now.")
    else:
        messages.error(request, "Nothing to retry: that call is already done.")
    return redirect("dashboard:returns")


@require_POST
@staff_required
def record_problem_retry_view(request: StaffRequest, problem_id: int) -> HttpResponse:
    # The record is read again at the seller's next pull: harmless, no confirmation.
    if record_problem_retry(problem_id=problem_id):
        messages.success(request, "Queued: the record is read again at the seller's next pull.")
    else:
        messages.error(request, "Nothing to retry: that record went through.")
    return redirect("dashboard:returns")
