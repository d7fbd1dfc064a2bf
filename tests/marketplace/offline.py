"""A browser cut off from everything but localhost, as on a machine without internet.

Every request to another host is aborted (so a page that needs one breaks, as it would
offline) and recorded (so a test can say which page asked for what).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from playwright.sync_api import BrowserContext, Page, Route

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}


@dataclass
class Offline:
    outside: list[str] = field(default_factory=list)  # "page → requested URL"
    csp_violations: list[str] = field(default_factory=list)


def cut_off(context: BrowserContext, page: Page) -> Offline:
    seen = Offline()

    def handle(route: Route) -> None:
        url = route.request.url
        host = urlsplit(url).hostname or ""
        if urlsplit(url).scheme in ("data", "blob") or host in LOCAL_HOSTS:
            route.continue_()
            return
        seen.outside.append(f"{page.url} → {url}")
        route.abort("internetdisconnected")

    context.route("**/*", handle)
    page.on(
        "console",
        lambda message: (
            seen.csp_violations.append(f"{page.url}: {message.text}")
            if "Content Security Policy" in message.text
            else None
        ),
    )
    return seen
