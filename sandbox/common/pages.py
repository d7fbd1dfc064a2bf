"""What every room's pages share: the one local stylesheet (no CDN: the sandbox runs
offline), served at /sandbox/sandbox.css, and the few small scripts (no inline script),
served at /sandbox/<name>.js."""

from pathlib import Path

from django.http import Http404, HttpRequest, HttpResponse

STATIC = Path(__file__).resolve().parent / "static" / "sandbox"
STYLESHEET = STATIC / "sandbox.css"
SCRIPTS = {"import_log"}


def stylesheet(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(STYLESHEET.read_bytes(), content_type="text/css; charset=utf-8")
    response["Cache-Control"] = "max-age=60"
    return response


def script(request: HttpRequest, name: str) -> HttpResponse:
    if name not in SCRIPTS:
        raise Http404(name)
    body = (STATIC / f"{name}.js").read_bytes()
    response = HttpResponse(body, content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "max-age=60"
    return response
