"""Production configuration: refuses to start without secrets, passes check --deploy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]

PRODUCTION_ENV = {
    "DJANGO_ENV": "production",
    "SECRET_KEY": "x7#" + "k2v9QpL4mZ8rT1wY6uN3bC5dF0gH" * 2,
    "ALLOWED_HOSTS": "marketplace.example.com",
    "DATABASE_URL": "postgres://u:p@db.example.com:5432/marketplace",
    "REDIS_URL": "redis://redis.example.com:6379/0",
    "APP_BASE_URL": "https://marketplace.example.com",
    "PLATFORM_BASE_URL": "https://platform.example.com/api/v1",
    "PLATFORM_CLIENT_ID": "mp-123",
    "PLATFORM_CLIENT_SECRET": "s3cret-from-vault",
    "TOKEN_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
    "EMAIL_URL": "smtp+tls://mailer:mail-pass@smtp.example.com:587",
}


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # DJANGO_ALLOW_ASYNC_UNSAFE is set for the browser tests; a deployment never has it.
    dropped = {*PRODUCTION_ENV, "DJANGO_ALLOW_ASYNC_UNSAFE"}
    clean = {k: v for k, v in os.environ.items() if k not in dropped}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_without_secrets_refuses_to_start_naming_them() -> None:
    result = _manage("check", env={"DJANGO_ENV": "production"})
    assert result.returncode != 0
    assert "Production configuration is incomplete" in result.stderr
    for name in ("SECRET_KEY", "TOKEN_ENCRYPTION_KEYS", "PLATFORM_CLIENT_SECRET"):
        assert name in result.stderr


def test_production_with_one_secret_missing_names_only_that_one() -> None:
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "TOKEN_ENCRYPTION_KEYS"}
    result = _manage("check", env=env)
    assert result.returncode != 0
    assert "TOKEN_ENCRYPTION_KEYS" in result.stderr
    assert "SECRET_KEY," not in result.stderr


def test_production_settings_pass_check_deploy() -> None:
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


# A key that looks like one but decodes to 31 bytes, and one that is not base64 at all.
SHORT_KEY = "c2hvcnQta2V5LXRoYXQtaXMtb25seS0zMS1ieXRlcw=="
NOT_A_KEY = "my-secret-passphrase"


@pytest.mark.parametrize(
    "keys",
    [",", " , ", NOT_A_KEY, f"{PRODUCTION_ENV['TOKEN_ENCRYPTION_KEYS']},{SHORT_KEY}"],
    ids=["only-a-comma", "blank-entries", "not-base64", "second-key-too-short"],
)
def test_production_refuses_an_empty_or_malformed_token_key_without_printing_it(
    keys: str,
) -> None:
    # Given production settings whose TOKEN_ENCRYPTION_KEYS holds no usable key list
    result = _manage("check", env={**PRODUCTION_ENV, "TOKEN_ENCRYPTION_KEYS": keys})
    # Then the process does not start, names the variable, and never echoes a key
    assert result.returncode != 0
    assert "TOKEN_ENCRYPTION_KEYS" in result.stderr
    output = result.stdout + result.stderr
    for key in (SHORT_KEY, NOT_A_KEY, PRODUCTION_ENV["TOKEN_ENCRYPTION_KEYS"]):
        assert key not in output


def test_production_without_email_url_names_it() -> None:
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "EMAIL_URL"}
    result = _manage("check", env=env)
    assert result.returncode != 0
    assert "Production configuration is incomplete" in result.stderr
    assert "EMAIL_URL" in result.stderr


@pytest.mark.parametrize(
    "url", ["consolemail://", "dummymail://", "memorymail://", "filemail:///tmp/mail"]
)
def test_production_refuses_e_mail_that_goes_nowhere(url: str) -> None:
    # Given production with seller notices going to the console, nowhere or a file
    result = _manage("check", env={**PRODUCTION_ENV, "EMAIL_URL": url})
    # Then it does not start, and says EMAIL_URL must be an SMTP URL
    assert result.returncode != 0
    assert "EMAIL_URL must be an SMTP URL in production" in result.stderr


def test_the_smtp_password_in_email_url_is_not_printed_when_refused() -> None:
    env = {**PRODUCTION_ENV, "EMAIL_URL": "consolemail://user:hunter2-secret@x"}
    result = _manage("check", env=env)
    assert result.returncode != 0
    assert "hunter2-secret" not in result.stdout + result.stderr


def test_importing_the_settings_creates_no_folder_and_a_process_start_does(
    tmp_path: Path,
) -> None:
    # Given a data folder that does not exist yet, with the embedded broker
    data_dir = tmp_path / "fresh" / "celery"
    env = {"CELERY_DATA_DIR": str(data_dir), "REDIS_URL": "", "DJANGO_ENV": "development"}
    clean = {k: v for k, v in os.environ.items() if k not in {*PRODUCTION_ENV, *env}}
    # When the settings are only imported
    imported = subprocess.run(
        [sys.executable, "-c", "import marketplace.settings as s; print(s.CELERY_DATA_DIR)"],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    # Then nothing is created
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == str(data_dir)
    assert not (tmp_path / "fresh").exists()
    # And a process start (any command) makes the broker's and beat's folders
    result = _manage("check", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    for folder in ("broker", "processed", "control"):
        assert (data_dir / folder).is_dir(), folder


# --- production refuses development values (issue 21) -------------------------------------

PLACEHOLDER_SECRET = "change-me-50-or-more-random-characters"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SECRET_KEY", None),  # the development values, read from the settings
        ("TOKEN_ENCRYPTION_KEYS", None),
        ("PLATFORM_CLIENT_SECRET", None),
        ("SECRET_KEY", PLACEHOLDER_SECRET),
        ("PLATFORM_CLIENT_SECRET", "change-me-client-secret"),
        ("PLATFORM_CLIENT_ID", "CHANGE-ME-client-id"),
        ("EMAIL_URL", "smtp+tls://change-me-user:change-me-password@smtp.example.com:587"),
        ("DATABASE_URL", "postgres://u:change-me-long-random-password@db:5432/marketplace"),
        ("DEBUG", "true"),
        ("METRICS_TOKEN", "change-me-" + "x" * 40),
        ("METRICS_TOKEN", "Xq7rT2"),
    ],
    ids=[
        "dev-secret-key",
        "dev-fernet-key",
        "dev-client-secret",
        "placeholder-secret-key",
        "placeholder-client-secret",
        "placeholder-client-id-any-case",
        "placeholder-email-url",
        "placeholder-database-url",
        "debug-true",
        "placeholder-metrics-token",
        "short-metrics-token",
    ],
)
def test_production_refuses_development_values_naming_the_setting_only(
    name: str, value: str | None
) -> None:
    from marketplace.settings import _DEV_SECRETS

    if value is None:
        value = _DEV_SECRETS[name]
    # Given production settings with one development value
    result = _manage("check", env={**PRODUCTION_ENV, name: value})
    # Then manage.py check fails, naming the setting and never printing the value
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "marketplace.E001" in output
    assert name in output
    if name != "DEBUG":
        assert value not in output
        for part in value.split(":"):
            if "change-me" in part.lower():
                assert part not in output


def _refused_start(command: list[str]) -> subprocess.CompletedProcess[str]:
    dropped = {*PRODUCTION_ENV, "DJANGO_ALLOW_ASYNC_UNSAFE"}
    clean = {k: v for k, v in os.environ.items() if k not in dropped}
    env = {**clean, **PRODUCTION_ENV, "SECRET_KEY": PLACEHOLDER_SECRET}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_wsgi_application_refuses_development_values_at_start() -> None:
    # gunicorn imports marketplace.wsgi: the import itself must fail
    result = _refused_start([sys.executable, "-c", "import marketplace.wsgi"])
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "SECRET_KEY" in result.stderr
    assert PLACEHOLDER_SECRET not in result.stdout + result.stderr


@pytest.mark.parametrize("program", ["worker", "beat"])
def test_celery_refuses_development_values_at_start(program: str) -> None:
    celery = str(Path(sys.executable).with_name("celery"))
    result = _refused_start([celery, "-A", "marketplace", program, "--loglevel", "INFO"])
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "SECRET_KEY" in result.stderr
    assert PLACEHOLDER_SECRET not in result.stdout + result.stderr


def test_production_serves_metrics_with_a_long_token_or_none() -> None:
    # An empty METRICS_TOKEN turns /metrics off (404): safe, so production starts.
    for token in ("", "k9" * 20):
        result = _manage(
            "check",
            "--deploy",
            "--fail-level",
            "WARNING",
            env={**PRODUCTION_ENV, "METRICS_TOKEN": token},
        )
        assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("APP_BASE_URL", "http://marketplace.example.com"),
        ("PLATFORM_BASE_URL", "http://platform.example.com/api/v1"),
        ("PLATFORM_API_BASE_URL", "http://platform.example.com/api.php"),
        ("PLATFORM_EDRTS_BASE_URL", "http://ebs.example.com/catalog/rest.php"),
        ("PLATFORM_OAUTH_BASE_URL", "HTTP://platform.example.com/oauth"),
    ],
)
def test_production_refuses_plain_http_base_urls_naming_the_setting(name: str, value: str) -> None:
    # Given production settings whose base URL is plain http:// to another machine
    result = _manage("check", env={**PRODUCTION_ENV, name: value})
    # Then manage.py check fails naming the setting, never printing the value
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "marketplace.E001" in output
    assert f"{name} must use https://" in output
    assert value not in output


@pytest.mark.parametrize(
    "value", ["http://127.0.0.1:8100/api/v1", "http://localhost:8100/api/v1", "http://[::1]:81/"]
)
def test_production_accepts_plain_http_to_a_local_address(value: str) -> None:
    env = {**PRODUCTION_ENV, "PLATFORM_BASE_URL": value, "APP_BASE_URL": value}
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
