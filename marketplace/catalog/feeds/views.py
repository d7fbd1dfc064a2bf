"""The endpoint the platform delivers feed files to: ``PUT /catalog/feeds/<key>/<file>``
or ``PUT /catalog/feeds/<key>/`` (the folder given as ``host``; the documents do not say
which one a platform uses), with HTTP Basic (the seller's feed credentials). 201 when
stored and queued.

Refused before anything is stored (a JSON body naming the reason, never the body's bytes):
401 bad credentials; 411 no valid Content-Length (a chunked body: Django's WSGI request
reads a body without Content-Length as empty, so it is refused rather than stored empty);
413 over ``FEED_MAX_BYTES``; 400 an empty body or one shorter than announced; 415 first
bytes that do not match the feed's compression (or binary bytes in a plain feed); 429
(with Retry-After) over ``FEED_SELLER_MAX_DELIVERIES_PER_HOUR``; 507 when the seller's
kept files would exceed ``FEED_SELLER_MAX_STORED_BYTES``."""

from __future__ import annotations

import base64
import binascii

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.debug import sensitive_variables
from django.views.decorators.http import require_http_methods

from marketplace.catalog.feeds.receive import (
    FeedRefused,
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


def _fail(message: str, status: int) -> HttpResponse:
    return JsonResponse({"status": "fail", "message": message}, status=status)


def _receive(request: HttpRequest, feed_key: str, file_name: str) -> HttpResponse:
    """The delivery itself, whichever URL it came to: Basic auth against the feed's
    credentials, the door's checks, then the file stored and queued (201)."""
    credentials = basic_credentials(request)
    if credentials is None:
        return _unauthorized()
    try:
        source = feed_source_authenticate(
            feed_key=feed_key, username=credentials[0], password=credentials[1]
        )
    except FeedUnauthorized:
        return _unauthorized()
    declared = request.headers.get("Content-Length", "").strip()
    if not declared.isdigit() or "chunked" in request.headers.get("Transfer-Encoding", "").lower():
        return _fail("a Content-Length is required (chunked bodies are not accepted)", 411)
    try:
        run = feed_file_receive(
            source=source,
            stream=request,
            file_name=file_name or "feed",
            declared_bytes=int(declared),
        )
    except FeedRefused as exc:
        response = _fail(str(exc), exc.status)
        if exc.retry_after is not None:
            response["Retry-After"] = str(exc.retry_after)
        return response
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
