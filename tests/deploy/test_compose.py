"""docker-compose.yml cannot run here (no Docker engine), so check its wiring by reading it."""

from __future__ import annotations

import importlib
import importlib.util
import re
import shlex
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
APP_SERVICES = ("web", "worker", "catalog-worker", "beat", "sandbox")
# Variables the sandbox process reads (it is a separate program with its own settings).
SANDBOX_ENV_VARS = {"SANDBOX_DATABASE_URL", "SANDBOX_PORT"}


def _command(service: dict) -> list[str]:
    command = service["command"]
    if isinstance(command, str):
        command = shlex.split(command)
    if command[:2] == ["sh", "-c"]:
        command = shlex.split(command[2].replace("&&", " && "))
    return command


def test_compose_has_the_whole_stack() -> None:
    assert set(COMPOSE["services"]) >= {"postgres", "redis", *APP_SERVICES}
    for name in APP_SERVICES:
        assert COMPOSE["services"][name]["build"] == "."
    assert (ROOT / "Dockerfile").exists()
    assert "requirements.txt" in (ROOT / "Dockerfile").read_text()


@pytest.mark.parametrize("name", APP_SERVICES)
def test_every_command_targets_code_that_exists(name: str) -> None:
    words = _command(COMPOSE["services"][name])
    checked = 0
    for i, word in enumerate(words):
        if word == "gunicorn":
            module, _, attr = words[i + 1].partition(":")
            assert hasattr(importlib.import_module(module), attr), words[i + 1]
            checked += 1
        elif word == "celery":
            assert words[i + 1] == "-A"
            app = importlib.import_module(words[i + 2]).celery_app
            assert words[i + 3] in {"worker", "beat"}
            assert app.main == "marketplace"
            checked += 1
        elif word == "-m":
            assert importlib.util.find_spec(f"{words[i + 1]}.__main__") is not None, words[i + 1]
            checked += 1
        elif word == "manage.py":
            assert (ROOT / "manage.py").exists()
            checked += 1
    assert checked, f"no recognised command in {words}"


@pytest.mark.parametrize("name", APP_SERVICES)
def test_every_variable_compose_sets_is_read_by_settings(name: str) -> None:
    environment = COMPOSE["services"][name]["environment"]
    read = set(settings.ENV_VARS) | (SANDBOX_ENV_VARS if name == "sandbox" else set())
    unknown = set(environment) - read
    assert not unknown, f"{name} sets variables nothing reads: {sorted(unknown)}"


def test_settings_env_vars_list_matches_what_settings_read() -> None:
    source = "\n".join(
        path.read_text() for path in sorted((ROOT / "marketplace" / "settings").glob("*.py"))
    )
    read = set(re.findall(r'env\.\w+\(\s*"([A-Z_]+)"', source)) | set(
        re.findall(r'_secret\("([A-Z_]+)"\)', source)
    )
    assert read <= set(settings.ENV_VARS), sorted(read - set(settings.ENV_VARS))


def test_production_secrets_in_compose_have_no_defaults() -> None:
    environment = COMPOSE["services"]["web"]["environment"]
    for name in ("SECRET_KEY", "PLATFORM_CLIENT_SECRET", "TOKEN_ENCRYPTION_KEYS"):
        assert ":?" in environment[name], f"{name} must be required, not defaulted"


COMPOSE_TEXT = (ROOT / "docker-compose.yml").read_text()
ENV_EXAMPLE = ROOT / ".env.example"
REQUIRED = set(re.findall(r"\$\{([A-Z_]+):\?", COMPOSE_TEXT))


def _env_example() -> dict[str, str]:
    pairs = (
        line.split("=", 1)
        for line in ENV_EXAMPLE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )
    return {name.strip(): value.strip() for name, value in pairs}


def test_published_ports_listen_on_localhost_only() -> None:
    # The sandbox's control API has no authentication: never on every interface.
    published = {name: service.get("ports", []) for name, service in COMPOSE["services"].items()}
    assert published["web"]
    assert published["sandbox"]
    for name, ports in published.items():
        for port in ports:
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port}"


def test_no_password_is_written_into_compose() -> None:
    postgres = COMPOSE["services"]["postgres"]["environment"]
    assert postgres["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?")
    database_url = COMPOSE["services"]["web"]["environment"]["DATABASE_URL"]
    assert "${POSTGRES_PASSWORD:?" in database_url
    assert "EMAIL_URL" in REQUIRED  # production refuses console mail: no default
    for name in ("SECRET_KEY", "PLATFORM_CLIENT_SECRET", "TOKEN_ENCRYPTION_KEYS"):
        assert name in REQUIRED


def test_env_example_has_a_placeholder_for_every_required_variable() -> None:
    example = _env_example()
    assert set(example) >= REQUIRED, sorted(REQUIRED - set(example))
    for name in REQUIRED:
        assert "change-me" in example[name], f"{name} must be a placeholder, not a value"
    # Every variable it sets is read by compose.
    assert set(example) <= set(re.findall(r"\$\{([A-Z_]+)", COMPOSE_TEXT))
    assert ".env" in (ROOT / ".gitignore").read_text().split()


def test_env_example_placeholders_do_not_start_production() -> None:
    # A forgotten placeholder is not a working key: the app refuses it at start.
    from marketplace.config_checks import fernet_keys

    with pytest.raises(ImproperlyConfigured, match="TOKEN_ENCRYPTION_KEYS"):
        fernet_keys(_env_example()["TOKEN_ENCRYPTION_KEYS"], name="TOKEN_ENCRYPTION_KEYS")


def test_the_image_collects_static_files_for_production_and_leaves_secrets_out() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    # Production's storage reads the manifest that only a production collectstatic writes.
    collect = next(part for part in dockerfile.split("\nRUN ") if "manage.py collectstatic" in part)
    assert "DJANGO_ENV=production" in collect
    assert "EMAIL_URL=smtp://" in collect
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".env" in ignored


def _option(words: list[str], name: str) -> str:
    return words[words.index(name) + 1]


def test_catalog_work_has_its_own_worker_and_the_main_worker_leaves_it() -> None:
    # A big or poisonous feed file must never starve pushes or token refreshes.
    main = _command(COMPOSE["services"]["worker"])
    catalog = _command(COMPOSE["services"]["catalog-worker"])
    main_queues = set(_option(main, "-Q").split(","))
    assert _option(catalog, "-Q") == "catalog"
    assert "catalog" not in main_queues
    # Every other queue the settings declare is consumed by the main worker.
    declared = {queue.name for queue in settings.CELERY_TASK_QUEUES}
    assert main_queues == declared - {"catalog"}
    assert int(_option(catalog, "--max-memory-per-child")) <= 1_000_000
    # Both the web (which stores delivered files) and the catalog worker see the files.
    for name in ("web", "catalog-worker"):
        assert "feeds:/app/var/feeds" in COMPOSE["services"][name]["volumes"]


def test_the_procfile_worker_consumes_every_queue_the_catalog_included() -> None:
    # `make run` has one worker: without -Q, Celery consumes every declared queue.
    worker = next(
        line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("worker:")
    )
    assert " -Q " not in worker
    assert "--queues" not in worker
    assert "catalog" in {queue.name for queue in settings.CELERY_TASK_QUEUES}


# --- the monitoring profile -------------------------------------------------------------
MONITORING = ("prometheus", "grafana")


def test_monitoring_starts_only_with_its_profile_from_pinned_official_images() -> None:
    services = COMPOSE["services"]
    for name in MONITORING:
        assert services[name]["profiles"] == ["monitoring"], name
        image, _, tag = services[name]["image"].partition(":")
        assert image in {"prom/prometheus", "grafana/grafana"}, image
        assert re.fullmatch(r"v?\d+\.\d+\.\d+", tag), f"{name}: pin a version, not {tag!r}"
    # The app's services run without a profile: `docker compose up` starts them alone.
    for name in ("postgres", "redis", *APP_SERVICES):
        assert "profiles" not in services[name], name


def _bind_mounts(service: dict) -> list[tuple[Path, str, str]]:
    mounts = []
    for volume in service["volumes"]:
        source, target, *mode = volume.split(":")
        if source.startswith("./"):
            mounts.append((ROOT / source, target, mode[0] if mode else "rw"))
    return mounts


@pytest.mark.parametrize("name", MONITORING)
def test_monitoring_mounts_the_deploy_files_read_only(name: str) -> None:
    mounts = _bind_mounts(COMPOSE["services"][name])
    assert mounts
    for source, _target, mode in mounts:
        assert source.exists(), source
        assert source.is_relative_to(ROOT / "deploy"), source
        assert mode == "ro", f"{name} mounts {source} writable"


def test_prometheus_scrapes_web_with_the_token_compose_hands_it() -> None:
    config = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text())
    job = next(job for job in config["scrape_configs"] if job["job_name"] == "marketplace")
    assert job["metrics_path"] == "/metrics"
    assert job["static_configs"][0]["targets"] == ["web:8000"]
    assert "gunicorn" in COMPOSE["services"]["web"]["command"]
    assert "0.0.0.0:8000" in COMPOSE["services"]["web"]["command"]
    # The token reaches Prometheus as a secret file made from the app's METRICS_TOKEN.
    assert job["authorization"]["credentials_file"] == "/run/secrets/metrics_token"
    assert COMPOSE["secrets"]["metrics_token"] == {"environment": "METRICS_TOKEN"}
    assert "metrics_token" in COMPOSE["services"]["prometheus"]["secrets"]
    environment = COMPOSE["services"]["web"]["environment"]
    assert environment["METRICS_TOKEN"] == "${METRICS_TOKEN:-}"  # empty: /metrics is off
    # Prometheus sends Host: web; Django answers it only if allowed.
    assert "web" in environment["ALLOWED_HOSTS"].split(":-")[1].rstrip("}").split(",")


def test_every_service_restarts_by_itself_after_it_exits() -> None:
    # A Celery worker can exit on a broker outage (see marketplace.broker_consumer): with
    # no restart policy nothing would run the work until someone noticed.
    for name, service in COMPOSE["services"].items():
        assert service.get("restart") == "unless-stopped", name


def test_the_worker_uses_the_consumer_that_survives_a_broker_restart() -> None:
    from celery.utils.imports import symbol_by_name

    from marketplace.broker_consumer import ReconnectingConsumer
    from marketplace.celery import app

    # What the worker loads (celery.worker.WorkController reads this setting)
    assert symbol_by_name(app.conf.worker_consumer) is ReconnectingConsumer
