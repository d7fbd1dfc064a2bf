"""Site-wide views: the landing redirect and the health check."""

from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect


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
