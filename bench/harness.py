"""Process management shared by the benchmarks and the soak.

``BenchEnvironment`` gives one run everything it needs, isolated from development data
and from other people's test runs on the same machine:

* a dedicated database: ``<name>_<suffix>`` on the Postgres server of ``DATABASE_URL``
  (dropped and created), else a temporary SQLite file;
* a broker: Redis when ``REDIS_URL`` is set (the database number can be overridden with
  ``BENCH_REDIS_DB``; that one database is flushed), else the filesystem broker in a
  temporary folder;
* the platform sandbox as a subprocess (``tests.support.sandbox_process.SandboxProcess``);
* environment variables for child processes (Celery workers, pull children) so that
  they and this process share the database, the broker and the sandbox.

Django is configured in this process by ``start()`` (so import models only after it).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform as platform_module
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

REPO_DIR = Path(__file__).resolve().parent.parent
if str(REPO_DIR) not in sys.path:
    sys.path.insert(0, str(REPO_DIR))

from tests.support.sandbox_process import SandboxProcess, free_port  # noqa: E402

CLIENT_ID = "bench-marketplace"
CLIENT_SECRET = "bench-marketplace-secret-5f1c"
REDIRECT_URL = "http://127.0.0.1:8000/sellers/connection/callback/"
PLATFORM_PASSWORD = "bench-seller-pass"
RESULTS_PATH = REPO_DIR / "bench" / "results.json"


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", flush=True)


def machine_info() -> dict[str, Any]:
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "nproc": os.cpu_count(),
        "cpu_model": cpu,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform_module.python_version(),
        "platform": platform_module.platform(),
    }


# --- the database -----------------------------------------------------------------------


def _postgres_admin(url: str) -> Any:
    import psycopg

    parts = urlsplit(url)
    admin_url = urlunsplit(parts._replace(path="/postgres"))
    return psycopg.connect(admin_url, autocommit=True)


def _postgres_recreate(url: str, name: str) -> str:
    with _postgres_admin(url) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def _postgres_drop(url: str, name: str) -> None:
    with contextlib.suppress(Exception), _postgres_admin(url) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _redis_url_with_db(url: str, db: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{db}"))


# --- private Redis (soak: restartable without touching anyone else's) --------------------


class PrivateRedis:
    """A redis-server of our own on a free port: the soak restarts it at will.

    The shared Redis of this machine serves other people's test runs; ``SHUTDOWN`` there
    would wipe every database of every user. Same binary, same flags as CI's.
    """

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.url = f"redis://127.0.0.1:{self.port}/0"

    @staticmethod
    def available() -> bool:
        return shutil.which("redis-server") is not None

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "redis-server",
                "--daemonize",
                "yes",
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
                "--logfile",
                str(self.workdir / "redis.log"),
                "--pidfile",
                str(self.workdir / "redis.pid"),
            ],
            check=True,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.ping():
                return
            time.sleep(0.05)
        raise RuntimeError("private redis-server did not start")

    def ping(self) -> bool:
        result = subprocess.run(
            ["redis-cli", "-p", str(self.port), "ping"], capture_output=True, text=True
        )
        return result.stdout.strip() == "PONG"

    def stop(self) -> None:
        subprocess.run(
            ["redis-cli", "-p", str(self.port), "shutdown", "nosave"], capture_output=True
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.ping():
            time.sleep(0.05)

    def restart(self) -> float:
        """SHUTDOWN NOSAVE and start again (every queued message is gone); seconds down."""
        started = time.monotonic()
        self.stop()
        self.start()
        return time.monotonic() - started


# --- the environment --------------------------------------------------------------------


@dataclass
class BenchEnvironment:
    """Database, broker, sandbox and settings for one run (see the module docstring)."""

    suffix: str = "bench"
    settings_module: str = "bench.settings"
    auto_ship_seconds: float | None = None
    private_redis: bool = False
    tmpdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="bench-")))
    redis: PrivateRedis | None = None
    database_url: str = ""
    broker: str = ""
    _pg_source: str = ""
    _pg_name: str = ""
    _children: list[Any] = field(default_factory=list)
    _sandbox: SandboxProcess | None = None

    @property
    def sandbox(self) -> SandboxProcess:
        """The sandbox ``start()`` started (every benchmark runs after it)."""
        assert self._sandbox is not None, "BenchEnvironment.start() not called"
        return self._sandbox

    def start(self) -> BenchEnvironment:
        source_db = os.environ.get("DATABASE_URL", "")
        if source_db.startswith(("postgres://", "postgresql://")):
            base = urlsplit(source_db).path.lstrip("/") or "postgres"
            self._pg_source, self._pg_name = source_db, f"{base}_{self.suffix}"
            self.database_url = _postgres_recreate(source_db, self._pg_name)
        else:
            self.database_url = f"sqlite:///{self.tmpdir / 'bench.sqlite3'}"
        redis_url = os.environ.get("REDIS_URL", "")
        if redis_url and self.private_redis and PrivateRedis.available():
            self.redis = PrivateRedis(self.tmpdir / "redis")
            self.redis.start()
            redis_url = self.redis.url
        elif redis_url and os.environ.get("BENCH_REDIS_DB"):
            redis_url = _redis_url_with_db(redis_url, os.environ["BENCH_REDIS_DB"])
        if redis_url:
            import redis

            redis.Redis.from_url(redis_url).flushdb()
            self.broker = redis_url
        else:
            self.broker = "filesystem"

        sandbox = self._sandbox = SandboxProcess(auto_ship_seconds=self.auto_ship_seconds).start()
        env = {
            "DJANGO_ENV": "development",
            "DJANGO_SETTINGS_MODULE": self.settings_module,
            "DATABASE_URL": self.database_url,
            "CELERY_DATA_DIR": str(self.tmpdir / "celery"),
            "PLATFORM_BASE_URL": sandbox.api_url,
            "PLATFORM_CLIENT_ID": CLIENT_ID,
            "PLATFORM_CLIENT_SECRET": CLIENT_SECRET,
            "PLATFORM_REDIRECT_URL": REDIRECT_URL,
            "LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        }
        os.environ.update(env)
        if redis_url:
            os.environ["REDIS_URL"] = redis_url
        else:
            os.environ.pop("REDIS_URL", None)
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)
        sandbox.register_client(CLIENT_ID, CLIENT_SECRET, REDIRECT_URL, name="Bench")
        return self

    @property
    def vendor(self) -> str:
        from django.db import connection

        return connection.vendor

    def child_env(self) -> dict[str, str]:
        """The environment of a child process: this one's (which start() completed)."""
        return dict(os.environ)

    def flush(self) -> None:
        """Empty the app's tables (between benchmarks)."""
        from django.core.management import call_command
        from django.db import connection

        call_command("flush", verbosity=0, interactive=False)
        if connection.vendor == "sqlite":
            with connection.cursor() as cursor:
                cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def stop(self) -> None:
        for child in list(self._children):
            with contextlib.suppress(Exception):
                child.stop()
        with contextlib.suppress(Exception):
            from django.db import connections

            connections.close_all()
        if self._sandbox is not None:
            self._sandbox.stop()
        if self.redis is not None:
            self.redis.stop()
        if self._pg_name:
            _postgres_drop(self._pg_source, self._pg_name)
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def __enter__(self) -> BenchEnvironment:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def worker(
        self,
        *,
        concurrency: int,
        name: str = "bench",
        beat: bool = False,
        env: dict[str, str] | None = None,
        nice: int = 0,
    ) -> Worker:
        worker = Worker(self, concurrency=concurrency, name=name, beat=beat, env=env, nice=nice)
        self._children.append(worker)
        return worker


class Worker:
    """``celery -A marketplace worker`` as a subprocess in its own process group."""

    def __init__(
        self,
        environment: BenchEnvironment,
        *,
        concurrency: int,
        name: str,
        beat: bool,
        env: dict[str, str] | None = None,
        nice: int = 0,
    ) -> None:
        self.environment = environment
        # The worker's processes (the pool inherits it) run at this niceness.
        self.nice = nice
        self.extra_env = env or {}
        self.concurrency = concurrency
        self.name = name
        self.beat = beat
        self.log_path = environment.tmpdir / f"worker-{name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self, timeout: float = 60.0) -> float:
        """Start and wait for "ready"; returns the seconds it took."""
        started = time.monotonic()
        command = [
            *(["nice", "-n", str(self.nice)] if self.nice else []),
            sys.executable,
            "-m",
            "celery",
            "-A",
            "marketplace",
            "worker",
            "--loglevel",
            "INFO",
            "--concurrency",
            str(self.concurrency),
            "--hostname",
            f"{self.name}-{os.getpid()}-{self.starts}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        if self.beat:
            command += ["--beat", "-s", str(self.environment.tmpdir / "beat-schedule")]
        self.starts += 1
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        log_file = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child
        self.process = subprocess.Popen(
            command,
            cwd=REPO_DIR,
            env={**self.environment.child_env(), **self.extra_env},
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: kill() reaches the pool too
        )
        log_file.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"worker exited early:\n{self.log_tail()}")
            with open(self.log_path, "rb") as handle:
                handle.seek(offset)
                if b" ready." in handle.read():
                    return time.monotonic() - started
            time.sleep(0.05)
        raise RuntimeError(f"worker not ready in {timeout}s:\n{self.log_tail()}")

    @property
    def pid(self) -> int:
        assert self.process is not None, "worker not started"
        return self.process.pid

    def kill(self) -> None:
        """SIGKILL the worker and its pool children (no warm shutdown, no acks)."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self, timeout: float = 20.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        # Pool children left behind by a warm shutdown that timed out.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


# --- platform accounts and connections -------------------------------------------------------


def sellers_create(*, count: int, prefix: str) -> list[Any]:
    """``count`` marketplace sellers (users without usable passwords), bulk inserted."""
    from django.contrib.auth import get_user_model

    from sellers.models import Seller

    user_model = get_user_model()
    user_ids = bulk_insert(
        user_model,
        ({"username": f"{prefix}-{i}", "password": "!", "email": ""} for i in range(count)),
    )
    bulk_insert(
        Seller,
        (
            {"user_id": uid, "display_name": f"{prefix} seller {i}"}
            for i, uid in enumerate(user_ids)
        ),
    )
    return list(Seller.objects.filter(user_id__in=user_ids).order_by("id"))


def seller_connect(sandbox: SandboxProcess, seller: Any, platform_username: str) -> Any:
    """A live connection: a grant minted at the sandbox, stored through the vault."""
    from marketplace.platform.oauth import TokenSet
    from sellers.services import connection_grant_store

    issued = sandbox.mint_tokens(CLIENT_ID, platform_username)
    tokens = TokenSet(
        access_token=issued["access_token"],
        refresh_token=issued["refresh_token"],
        expires_in=int(issued["expires_in"]),
    )
    return connection_grant_store(seller=seller, tokens=tokens, actor=None)


def platform_sellers_create(sandbox: SandboxProcess, sellers: list[Any]) -> list[str]:
    names = []
    for seller in sellers:
        name = f"p-{seller.user.username}"
        sandbox.create_seller(name, PLATFORM_PASSWORD, name=seller.display_name)
        names.append(name)
    return names


# --- bulk data --------------------------------------------------------------------------------


def bulk_insert(model: Any, rows: Iterable[dict[str, Any]], *, batch: int = 20000) -> list[int]:
    """Insert rows fast (Postgres COPY, SQLite executemany) with explicit ids; returns ids.

    Each row is a dict of attribute names (``seller_id``, not ``seller``); missing fields
    get the model's default (``auto_now`` fields: now). Sequences are reset afterwards.
    """
    from django.core.management.color import no_style
    from django.db import connection, models, transaction
    from django.db.models import Max
    from django.utils import timezone

    fields = list(model._meta.concrete_fields)
    now = timezone.now()
    defaults: dict[str, Any] = {}
    for f in fields:
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            defaults[f.attname] = now
        elif not f.primary_key:
            defaults[f.attname] = f.get_default()
    columns = [f.column for f in fields]
    table = model._meta.db_table
    next_id = (model.objects.aggregate(m=Max("id"))["m"] or 0) + 1
    postgres = connection.vendor == "postgresql"
    json_fields = {f.attname for f in fields if isinstance(f, models.JSONField)}
    prep_fields = [
        f
        for f in fields
        if isinstance(f, models.DateTimeField | models.DateField | models.DecimalField)
        or f.attname in json_fields
    ]
    ids: list[int] = []

    def rows_out(chunk: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        out = []
        for row in chunk:
            values = {**defaults, **row}
            values["id"] = row_id = next_id + len(ids)
            ids.append(row_id)
            if postgres:
                for name in json_fields:
                    values[name] = json.dumps(values[name])
            else:
                for f in prep_fields:
                    values[f.attname] = f.get_db_prep_save(values[f.attname], connection)
            out.append(tuple(values[f.attname] for f in fields))
        return out

    quoted = ", ".join(connection.ops.quote_name(c) for c in columns)
    with transaction.atomic():
        chunk: list[dict[str, Any]] = []
        for row in [*rows, None]:
            if row is not None:
                chunk.append(row)
                if len(chunk) < batch:
                    continue
            if not chunk:
                break
            tuples = rows_out(chunk)
            chunk = []
            with connection.cursor() as cursor:
                if postgres:
                    with cursor.cursor.copy(f"COPY {table} ({quoted}) FROM STDIN") as copy:
                        for values in tuples:
                            copy.write_row(values)
                else:
                    marks = ", ".join(["%s"] * len(columns))
                    cursor.executemany(
                        f"INSERT INTO {table} ({quoted}) VALUES ({marks})",
                        tuples,
                    )
        with connection.cursor() as cursor:
            for sql in connection.ops.sequence_reset_sql(no_style(), [model]):
                cursor.execute(sql)
    return ids


def order_rows(
    *,
    seller_ids: list[int],
    count: int,
    prefix: str,
    state: str = "AWAITING_SHIPMENT",
    lines_per_order: int = 2,
) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Valid orders (as the sandbox checks them) spread round-robin over the sellers."""
    purchased = datetime.now(UTC) - timedelta(days=1)
    for i in range(count):
        order = {
            "mp_order_number": f"{prefix}-{i:07d}",
            "seller_id": seller_ids[i % len(seller_ids)],
            "state": state,
            "sales_channel": "EU",
            "purchase_date": purchased,
            "currency": "EUR",
            "customer_full_name": f"Buyer {i}",
            "customer_email": f"buyer{i}@example.com",
            "ship_full_name": f"Buyer {i}",
            "ship_address1": f"{i} Benchmark Street",
            "ship_city": "Lyon",
            "ship_postal_code": "69001",
            "ship_country_code": "FRA",
            "ship_country_code_iso2": "FR",
            "intake_fingerprint": f"{i:064x}"[-64:],
        }
        lines = [
            {
                "mp_line_number": str(n + 1),
                "sku": f"SKU-{(i + n) % 500}",
                "product_name": f"Product {(i + n) % 500}",
                "quantity": 1 + (i + n) % 3,
                "unit_price": "19.90",
                "shipping_price": "4.50",
                "shipping_method": "standard",
                "taxes": [{"type": "VAT", "amount": "3.98"}],
                "discounts": [],
            }
            for n in range(lines_per_order)
        ]
        yield order, lines


def orders_insert(
    *,
    seller_ids: list[int],
    count: int,
    prefix: str,
    state: str = "AWAITING_SHIPMENT",
    lines_per_order: int = 2,
    sync_status: str = "pending",
    sync_row: Callable[[int], dict[str, Any]] | None = None,
) -> list[int]:
    """Orders, their lines and their sync rows, bulk inserted; returns the order ids."""
    from django.utils import timezone

    from marketplace.orders.models import Order, OrderLine, OrderSync

    generated = list(
        order_rows(
            seller_ids=seller_ids,
            count=count,
            prefix=prefix,
            state=state,
            lines_per_order=lines_per_order,
        )
    )
    order_ids = bulk_insert(Order, (order for order, _ in generated))
    bulk_insert(
        OrderLine,
        (
            {**line, "order_id": order_id}
            for order_id, (_, lines) in zip(order_ids, generated, strict=True)
            for line in lines
        ),
    )
    now = timezone.now()
    synced = sync_status == "synced"

    def default_sync(order_id: int) -> dict[str, Any]:
        return {
            "order_id": order_id,
            "status": sync_status,
            "desired_version": 1,
            "pushed_version": 1 if synced else 0,
            "next_attempt_at": None if synced else now,
            "last_pushed_at": now if synced else None,
        }

    bulk_insert(OrderSync, ((sync_row or default_sync)(order_id) for order_id in order_ids))
    return order_ids


# --- measuring and reporting -----------------------------------------------------------------


def timed(function: Callable[[], Any], *, repeat: int) -> tuple[float, Any]:
    """Median seconds of ``repeat`` calls (after one warm-up) and the last result."""
    result = function()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples), result


def wait_until(
    condition: Callable[[], Any], *, timeout: float, interval: float = 0.2, what: str = ""
) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def results_write(path: Path, key: str, value: dict[str, Any]) -> None:
    """Merge one section into the results file (other sections are kept)."""
    data: dict[str, Any] = {}
    if path.exists():
        with contextlib.suppress(ValueError):
            data = json.loads(path.read_text())
    data[key] = value
    data["machine"] = machine_info()
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")


def table(rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
