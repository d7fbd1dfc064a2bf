"""The endpoint the platform delivers feed files to: ``PUT /catalog/feeds/<key>/<file>``
or ``PUT /catalog/feeds/<key>/`` (the folder given as ``host``; the documents do not say
which one a platform uses), with HTTP Basic (the seller's feed credentials). 201 when
stored and queued."""

from __future__ import annotations

import base64
import binascii

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.debug import sensitive_variables
from django.views.decorators.http import require_http_methods

from marketplace.catalog.receiving import (
    FEED_MAX_BYTES,
    FeedTooLarge,
    FeedUnauthorized,
    feed_file_receive,
    feed_source_authenticate,
)


def basic_unauthorized(realm: str) -> HttpResponse:
    response = JsonResponse({"status": "fail", "message": "authentication required"}, status=401)
    response["WWW-Authenticate"] = f'Basic realm="{realm}", charset="UTF-8"'
    return response


def _unauthorized() -> HttpResponse:
    return basic_unauthorized("catalog feeds")


@sensitive_variables("password", "decoded")
def basic_credentials(request: HttpRequest) -> tuple[str, str] | None:
    header = request.headers.get("Authorization", "")
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic" or not encoded:
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    username, sep, password = decoded.partition(":")
    return (username, password) if sep else None


def _receive(request: HttpRequest, feed_key: str, file_name: str) -> HttpResponse:
    """The delivery itself, whichever URL it came to: Basic auth against the feed's
    credentials, the size limit, then the file stored and queued (201)."""
    credentials = basic_credentials(request)
    if credentials is None:
        return _unauthorized()
    try:
        source = feed_source_authenticate(
            feed_key=feed_key, username=credentials[0], password=credentials[1]
        )
    except FeedUnauthorized:
        return _unauthorized()
    declared = request.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > FEED_MAX_BYTES:
        return JsonResponse({"status": "fail", "message": "file too large"}, status=413)
    try:
        run = feed_file_receive(source=source, stream=request, file_name=file_name or "feed")
    except FeedTooLarge as exc:
        return JsonResponse({"status": "fail", "message": str(exc)}, status=413)
    return JsonResponse({"status": "success", "run_id": run.pk}, status=201)


# Both URLs are API endpoints with their own credentials (HTTP Basic), never a browser
# form: no CSRF check, which would answer the platform's PUT with Django's HTML 403.
@csrf_exempt
@require_http_methods(["PUT"])
@sensitive_variables("credentials")
def receive(request: HttpRequest, feed_key: str, file_name: str) -> HttpResponse:
    """A file PUT below the folder: ``host`` + ``/`` + ``file_name`` (reading A)."""
    return _receive(request, feed_key, file_name)


@csrf_exempt
@sensitive_variables("credentials")
def folder(request: HttpRequest, feed_key: str) -> HttpResponse:
    """The folder URL given to the platform as ``host``. A platform may PUT the file to
    ``host`` itself (reading B of the delivery URL): taken like a PUT below it."""
    if request.method != "PUT":
        response = JsonResponse(
            {"status": "fail", "message": "PUT the file to this URL or below it"}, status=405
        )
        response["Allow"] = "PUT"
        return response
    return _receive(request, feed_key, "")
