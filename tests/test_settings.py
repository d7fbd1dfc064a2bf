"""Production configuration: refuses to start without secrets, passes check --deploy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parent.parent

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
