"""The sandbox-wide control API under /sandbox/api and the pages' stylesheet and scripts."""

from django.urls import path

from sandbox.common import control_views, pages
from sandbox.common.api_php import control as api_control

urlpatterns = [
    path("health", control_views.health, name="health"),
    path("sandbox/sandbox.css", pages.stylesheet, name="sandbox_css"),
    path("sandbox/<slug:name>.js", pages.script, name="sandbox_js"),
    path("sandbox/api/reset", control_views.reset, name="sandbox_reset"),
    path("sandbox/api/faults", control_views.faults_view, name="sandbox_faults"),
    path("sandbox/api/clock", control_views.clock_view, name="sandbox_clock"),
    path(
        "sandbox/api/additive-fields",
        control_views.additive_fields,
        name="sandbox_additive_fields",
    ),
    path("sandbox/api/readings", control_views.readings, name="sandbox_readings"),
    path("sandbox/api/token-body", control_views.token_body, name="sandbox_token_body"),
    path("sandbox/api/retry-grace", control_views.retry_grace, name="sandbox_retry_grace"),
    path("sandbox/api/rate-limits", api_control.rate_limits_view, name="sandbox_rate_limits"),
]
