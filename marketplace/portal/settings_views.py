"""The seller's settings page: which "what needs you" e-mails they get."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from marketplace.portal.digest import notifications_of
from marketplace.portal.models import SellerNotifications
from sellers.access import SellerRequest, seller_required


class NotificationsForm(forms.ModelForm[SellerNotifications]):
    class Meta:
        model = SellerNotifications
        fields = ["email_problems", "email_returns", "email_listings", "email_connection"]
        labels = {
            "email_problems": "An order has a problem to fix",
            "email_returns": "A buyer's return waits for my answer",
            "email_listings": "The marketplace refused one of my products",
            "email_connection": "My platform connection is lost",
        }


@require_http_methods(["GET", "POST"])
@seller_required
def notification_settings(request: SellerRequest) -> HttpResponse:
    prefs = notifications_of(request.seller)
    form = NotificationsForm(request.POST or None, instance=prefs)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Your e-mail choices are saved.")
        see_other = redirect("sellers:settings")
        see_other.status_code = 303
        return see_other
    return render(
        request,
        "portal/settings.html",
        {
            "form": form,
            "email": request.seller.user.email,
            "minutes": settings.SELLER_DIGEST_MINUTES,
        },
    )
