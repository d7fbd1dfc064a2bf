"""Site-wide views: the landing redirect, the favicon and the health check."""

from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    JsonResponse,
)
from django.shortcuts import redirect
from django.templatetags.static import static


@login_required
def home(request: HttpRequest) -> HttpResponse:
    # Staff land on the operations dashboard, sellers on their portal.
    if request.user.is_staff:
        return redirect("dashboard:overview")
    return redirect("sellers:portal")


def healthz(request: HttpRequest) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


def favicon(request: HttpRequest) -> HttpResponse:
    # Browsers ask for /favicon.ico whatever the page says. The static URL is resolved per
    # request, not at import: with the manifest storage of production, resolving it at
    # import would need collectstatic's manifest before any command could even start.
    return HttpResponsePermanentRedirect(static("favicon.svg"))
