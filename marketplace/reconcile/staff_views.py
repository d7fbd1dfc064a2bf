"""Staff pages of reconciliation (mounted under /dashboard/ by ``dashboard/urls.py``):
the findings with both versions side by side, settling an open one, and the seller page's
Reconcile now (a harmless action: it acts at once, through ``staff_confirm``)."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from marketplace.access import StaffRequest, staff_required
from marketplace.reconcile import selectors, services
from marketplace.reconcile.forms import FindingFilterForm, SettleForm
from marketplace.reconcile.kinds import MONEY_KINDS
from marketplace.reconcile.models import Finding
from marketplace.staff_confirm import Outcome, confirmed_action
from sellers.models import Seller

PAGE_SIZE = 50


@require_POST
@staff_required
def seller_reconcile_now(request: StaffRequest, seller_id: int) -> HttpResponse:
    seller = get_object_or_404(Seller, pk=seller_id)

    def run() -> Outcome:
        done = services.reconcile_now(seller=seller, actor=request.user.get_username())
        return Outcome(ok=done.ok, message=done.message)

    return confirmed_action(
        request, back_url=reverse("dashboard:seller", args=[seller.pk]), run=run
    )


@require_GET
@staff_required
def findings(request: StaffRequest) -> HttpResponse:
    form = FindingFilterForm(request.GET)
    params = form.cleaned_data if form.is_valid() else {}
    rows = selectors.findings_list(
        kind=params.get("kind") or "",
        seller_id=params.get("seller"),
        status=params.get("status") or "",
    )
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "dashboard/reconcile_findings.html",
        {
            "form": form,
            "page": page,
            "money_kinds": MONEY_KINDS,
            "by_kind": selectors.findings_by_kind(),
            "settle_form": SettleForm(),
        },
    )


@require_POST
@staff_required
def finding_settle(request: StaffRequest, finding_id: int) -> HttpResponse:
    finding = Finding.objects.filter(pk=finding_id).first()
    if finding is None:
        raise Http404("no such finding")
    form = SettleForm(request.POST)

    def run() -> Outcome:
        if not form.is_valid():
            return Outcome(False, "Not settled: write a note saying what was done.")
        settled = services.finding_settle(
            finding_id=finding.pk, actor=request.user.get_username(), note=form.cleaned_data["note"]
        )
        if not settled:
            return Outcome(False, "Not settled: this finding is not open.")
        return Outcome(True, f"Finding {finding.pk} settled.")

    return confirmed_action(request, back_url=reverse("dashboard:reconcile_findings"), run=run)
