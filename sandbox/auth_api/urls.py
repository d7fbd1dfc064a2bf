"""The Authentication API under /api.php (/login, /user/accounts) and its control-API
additions under /sandbox/api (outbox, API users and tokens, accounts)."""

from django.urls import path

from sandbox.auth_api import control_views, views

urlpatterns = [
    path("api.php/login", views.login_view, name="platform_login"),
    path("api.php/user/accounts", views.user_accounts, name="platform_user_accounts"),
    path("api.php/user/list-accounts", views.list_accounts, name="platform_list_accounts"),
    path("sandbox/api/outbox", control_views.outbox, name="sandbox_outbox"),
    path("sandbox/api/api-users", control_views.api_users, name="sandbox_api_users"),
    path(
        "sandbox/api/api-tokens/revoke",
        control_views.api_tokens_revoke,
        name="sandbox_api_tokens_revoke",
    ),
    path("sandbox/api/accounts", control_views.accounts, name="sandbox_platform_accounts"),
]
