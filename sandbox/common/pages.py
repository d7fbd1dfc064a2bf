"""What every room's pages share: the one local stylesheet (no CDN: the sandbox runs
offline), served at /sandbox/sandbox.css."""

from pathlib import Path

from django.http import HttpRequest, HttpResponse

STYLESHEET = Path(__file__).resolve().parent / "static" / "sandbox" / "sandbox.css"


def stylesheet(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(STYLESHEET.read_bytes(), content_type="text/css; charset=utf-8")
    response["Cache-Control"] = "max-age=60"
    return response
