"""The listing-status file the platform's import fetches:
``GET /catalog/status/<status_key>/listing-status.csv`` with HTTP Basic (the seller's
status-file credentials, given only to the import). Streamed: 100k listings never sit in
memory."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.debug import sensitive_variables
from django.views.decorators.http import require_http_methods

from marketplace.catalog.feeds.views import basic_credentials, basic_unauthorized
from marketplace.catalog.listing_status.status_file import status_csv_chunks
from marketplace.catalog.listing_status.status_file_auth import (
    StatusFileUnauthorized,
    StatusFileUnknown,
    status_import_authenticate,
)


# HEAD answers as GET does (credentials, 404, headers) without a body or building the file.
@require_http_methods(["GET", "HEAD"])
@sensitive_variables("credentials")
def listing_status(request: HttpRequest, status_key: str) -> HttpResponseBase:
    credentials = basic_credentials(request)
    try:
        status_import = status_import_authenticate(
            status_key=status_key,
            username=credentials[0] if credentials else None,
            password=credentials[1] if credentials else None,
        )
    except StatusFileUnknown:
        return JsonResponse({"status": "fail", "message": "not found"}, status=404)
    except StatusFileUnauthorized:
        return basic_unauthorized("listing status")
    if request.method == "HEAD":
        response: HttpResponse | StreamingHttpResponse = HttpResponse(
            content_type="text/csv; charset=utf-8"
        )
    else:
        response = StreamingHttpResponse(
            status_csv_chunks(seller_id=status_import.source.seller_id),
            content_type="text/csv; charset=utf-8",
        )
    response["Content-Disposition"] = 'attachment; filename="listing-status.csv"'
    response["Cache-Control"] = "no-store"
    return response
