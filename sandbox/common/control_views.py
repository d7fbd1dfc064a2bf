"""The sandbox-wide control API under /sandbox/api: health, reset, fault rules, the clock,
the additive-fields switch, the retry grace and the readings of the silent points (JSON
in and out, no auth: local only)."""

from django.http import HttpRequest, JsonResponse

from sandbox.common import clock, faults, request_log, resets, switches, violations
from sandbox.common.control import control
from sandbox.common.json_bodies import BadBody, json_object_body


def health(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@control(("POST",))
def reset(request: HttpRequest) -> JsonResponse:
    body = json_object_body(request, allow_empty=True)
    keep_accounts = bool(body.get("keep_accounts", False))
    resets.reset_all(keep_accounts=keep_accounts)
    faults.reset()
    clock.reset()
    switches.reset()
    request_log.reset()
    violations.reset()
    return JsonResponse({"reset": True, "kept_accounts": keep_accounts})


@control(("POST", "GET", "DELETE"))
def faults_view(request: HttpRequest) -> JsonResponse:
    if request.method == "DELETE":
        faults.reset()
        return JsonResponse({"faults": []})
    if request.method == "POST":
        body = json_object_body(request)
        specs = body.get("faults", [body])
        if not isinstance(specs, list):
            raise BadBody("faults must be a list")
        try:
            for spec in specs:
                if not isinstance(spec, dict):
                    raise BadBody("each fault must be an object")
                faults.rule_add(spec)
        except faults.FaultSpecError as exc:
            raise BadBody(str(exc)) from exc
    return JsonResponse({"faults": faults.rules()})


@control(("POST", "GET"))
def clock_view(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        body = json_object_body(request)
        if body.get("reset"):
            clock.reset()
        shift = body.get("shift_seconds", 0)
        if isinstance(shift, bool) or not isinstance(shift, int | float):
            raise BadBody("shift_seconds must be a number")
        clock.shift(shift)
    return JsonResponse({"offset_seconds": clock.offset_seconds(), "now": clock.now().isoformat()})


@control(("POST", "GET"))
def additive_fields(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        enabled = json_object_body(request).get("enabled")
        if not isinstance(enabled, bool):
            raise BadBody("enabled (bool) is required")
        switches.set_additive_fields(enabled=enabled)
    return JsonResponse({"enabled": switches.current.additive_fields})


@control(("POST", "GET"))
def retry_grace(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        seconds = json_object_body(request).get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            raise BadBody("seconds must be a number >= 0")
        switches.set_retry_grace(seconds=float(seconds))
    return JsonResponse({"seconds": switches.current.retry_grace_seconds})


@control(("POST", "GET"))
def readings(request: HttpRequest) -> JsonResponse:
    """``POST {"import_cron": "B"}`` or ``{"all": "B"}`` → every point's reading."""
    if request.method == "POST":
        try:
            switches.readings_set(json_object_body(request))
        except switches.ReadingError as exc:
            raise BadBody(str(exc)) from exc
    return JsonResponse({"readings": dict(switches.current.readings)})


@control(("POST", "GET"))
def token_body(request: HttpRequest) -> JsonResponse:
    """``POST {"reading": "A" | "B" | "C"}``: the token call takes both bodies, JSON only
    or form only."""
    if request.method == "POST":
        reading = json_object_body(request).get("reading")
        try:
            switches.set_token_body(reading if isinstance(reading, str) else "")
        except switches.ReadingError as exc:
            raise BadBody(str(exc)) from exc
    return JsonResponse({"reading": switches.current.token_body})
