"""Strict reading of the order interface's query strings.

The contract names the listing's parameters and no others. A parameter the endpoint does
not take, or one given twice, is refused (400 naming it) rather than ignored: a lenient
stand-in would let a client depend on being forgiven.
"""

from django.http import HttpRequest


def query_params(
    request: HttpRequest, allowed: frozenset[str] = frozenset()
) -> tuple[dict[str, str], dict[str, str]]:
    """(parameter -> its one value, parameter -> problem) for the request's query string."""
    params: dict[str, str] = {}
    problems: dict[str, str] = {}
    for name, values in request.GET.lists():
        if name not in allowed:
            problems[name] = "unknown query parameter"
        elif len(values) > 1:
            problems[name] = "given more than once"
        else:
            params[name] = values[0]
    return params, problems


def problems_message(problems: dict[str, str]) -> str:
    return "; ".join(f"{name!r}: {reason}" for name, reason in problems.items())
