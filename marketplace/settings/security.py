"""Secrets, hosts, cookies, the Content-Security-Policy, sign-in throttling and the
inputs of the production checks (``marketplace.config_checks`` runs them)."""

from __future__ import annotations

from datetime import timedelta

from django.core.exceptions import ImproperlyConfigured

from marketplace.config_checks import DEVELOPMENT_VALUES, fernet_keys, production_email
from marketplace.settings.base import EMAIL_CONFIG, PRODUCTION, env

# Development-only values (public: they are in the repository), so production refuses
# to start unless every one of them is set in the environment.
_DEV_SECRETS = DEVELOPMENT_VALUES
_REQUIRED_IN_PRODUCTION = (
    *_DEV_SECRETS,
    "EMAIL_URL",
    "ALLOWED_HOSTS",
    "DATABASE_URL",
    "REDIS_URL",
    "PLATFORM_BASE_URL",
    "APP_BASE_URL",
)
if PRODUCTION:
    _missing = [name for name in _REQUIRED_IN_PRODUCTION if not env.str(name, default="")]
    if _missing:
        raise ImproperlyConfigured(
            "Production configuration is incomplete; set these environment variables: "
            + ", ".join(_missing)
        )


def _secret(name: str) -> str:
    value: str = env.str(name, default="" if PRODUCTION else _DEV_SECRETS[name])
    return value


SECRET_KEY = _secret("SECRET_KEY")
PLATFORM_CLIENT_ID = _secret("PLATFORM_CLIENT_ID")
PLATFORM_CLIENT_SECRET = _secret("PLATFORM_CLIENT_SECRET")

# Fernet keys, comma-separated: the first encrypts, all decrypt (key rotation). An
# empty or malformed entry stops the start (naming the variable, never the key).
TOKEN_ENCRYPTION_KEYS = fernet_keys(_secret("TOKEN_ENCRYPTION_KEYS"), name="TOKEN_ENCRYPTION_KEYS")

# The bearer token Prometheus sends to /metrics (marketplace.metrics). Empty: the endpoint
# answers 404 to everyone. No address is trusted instead: behind a proxy every request
# comes from the proxy's address. Production refuses a short or placeholder token.
METRICS_TOKEN: str = env.str("METRICS_TOKEN", default="")

ALLOWED_HOSTS: list[str] = env.list(
    "ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"]
)
CSRF_TRUSTED_ORIGINS: list[str] = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# Production sends real mail (seller notices); refuse anything else.
if PRODUCTION:
    production_email(
        raw_url=env.str("EMAIL_URL"), backend=EMAIL_CONFIG["EMAIL_BACKEND"], name="EMAIL_URL"
    )

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Sign-in throttling (django-axes): failures are counted in the database, so the web
# processes share them without a shared cache (django-ratelimit would need one; the
# development stack has none). Five wrong passwords for one username from one address
# lock that pair out for 15 minutes; the pair, not the username alone, so nobody can
# lock a seller out of their account from elsewhere. A success clears the count.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "sellers/locked_out.html"
AXES_VERBOSE = False

# --- Cookies, headers, CSP -------------------------------------------------------
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"  # the OAuth callback is a top-level GET: Lax keeps the session
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Content-Security-Policy (django-csp): every page loads scripts, styles, images and
# data only from this app; no inline script or style, no frames. The Connect form's
# redirect to the platform is a navigation, which these directives do not restrict.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        # Swagger UI and the admin draw a few icons as data: URLs.
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
if PRODUCTION:
    SECURE_SSL_REDIRECT: bool = env.bool("SECURE_SSL_REDIRECT", default=True)
    # Prometheus scrapes /metrics over the private network (web:8000, plain HTTP): a
    # redirect to https there would fail every scrape. The bearer token still applies.
    SECURE_REDIRECT_EXEMPT = [r"^metrics$"]
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = 60 * 60 * 24 * 365
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
