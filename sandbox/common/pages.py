"""What every room's pages share: the one local stylesheet (no CDN: the sandbox runs
offline), served at /sandbox/sandbox.css, and the few small scripts (no inline script),
served at /sandbox/<name>.js."""

from collections.abc import Callable
from pathlib import Path

from django.http import Http404, HttpRequest, HttpResponse
from django.utils.safestring import SafeString, mark_safe

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


# Sections other rooms add to a database's page (/sandbox/platform/dbs/{id}/): the page's
# room calls ``db_sections`` and the rooms that know more about a database register a
# renderer here, so neither imports the other.
DbSection = Callable[[HttpRequest, int], str]
_db_sections: dict[str, DbSection] = {}


def db_section_register(name: str, render: DbSection) -> None:
    """``render(request, db_id)`` → HTML (idempotent per ``name``)."""
    _db_sections[name] = render


def db_sections(request: HttpRequest, db_id: int) -> list[SafeString]:
    return [mark_safe(render(request, db_id)) for render in _db_sections.values()]  # noqa: S308
