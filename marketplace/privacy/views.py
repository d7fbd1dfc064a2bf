"""The staff page that erases one buyer: enter an e-mail, see what matches, confirm.

The e-mail travels only in POST bodies (never a URL: it would reach access logs and the
browser history), and the result page does not repeat it.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from marketplace.access import StaffRequest, staff_required
from marketplace.privacy.erasure import buyer_erase, buyer_erasure_preview, erasure_summary
from marketplace.privacy.forms import EraseBuyerForm
from marketplace.privacy.models import BuyerErasure

TEMPLATE = "privacy/erase.html"


@staff_required
@require_http_methods(["GET", "POST"])
def erase_buyer(request: StaffRequest) -> HttpResponse:
    recent = BuyerErasure.objects.all()[:10]
    if request.method == "GET":
        return render(request, TEMPLATE, {"form": EraseBuyerForm(), "recent": recent})
    form = EraseBuyerForm(request.POST)
    if not form.is_valid():
        return render(request, TEMPLATE, {"form": form, "recent": recent}, status=400)
    email = form.cleaned_data["email"]
    if request.POST.get("confirmed") != "yes":
        preview = buyer_erasure_preview(email=email)
        return render(request, TEMPLATE, {"form": form, "preview": preview, "recent": recent})
    erasure = buyer_erase(email=email, requested_by=request.user.get_username())
    return render(
        request,
        TEMPLATE,
        {"form": EraseBuyerForm(), "done": erasure_summary(erasure), "recent": recent},
    )
