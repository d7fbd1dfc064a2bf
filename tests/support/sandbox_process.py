"""Run the platform sandbox as a subprocess for tests: ``SandboxProcess``.

It starts ``python -m sandbox serve`` on a free port with its own temporary SQLite
database, waits for ``/health`` and wraps the control API (``/sandbox/api``) in small
helpers. The app's code never imports the sandbox; tests talk to it over HTTP only.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypeVar

import requests

REPO_DIR = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class SandboxError(RuntimeError):
    pass


# Every answer of the control API is one JSON object.
JSON = dict[str, Any]
_T = TypeVar("_T")


def _field(answer: JSON, key: str, kind: type[_T]) -> _T:
    """``answer[key]``, checked to be of the type the control API documents for it."""
    value = answer[key]
    if not isinstance(value, kind):
        raise SandboxError(f"{key!r} is {value!r}, not {kind.__name__}")
    return value


class SandboxProcess:
    """The sandbox in a subprocess; ``start()`` / ``stop()`` or use as a context manager."""

    def __init__(
        self,
        *,
        port: int | None = None,
        auto_ship_seconds: float | None = None,
        additive_fields: bool = False,
    ) -> None:
        self.port = port or free_port()
        self.auto_ship_seconds = auto_ship_seconds
        self.additive_fields = additive_fields
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.api_url = self.base_url + "/api/v1"
        self.control_url = self.base_url + "/sandbox/api"
        self._tmpdir = Path(tempfile.mkdtemp(prefix="sandbox-test-"))
        self.db_path = self._tmpdir / "sandbox.sqlite3"
        self.log_path = self._tmpdir / "sandbox.log"
        self._process: subprocess.Popen[bytes] | None = None
        self._log_file: Any = None
        self.http = requests.Session()

    @property
    def pid(self) -> int:
        assert self._process is not None, "sandbox not started"
        return self._process.pid

    # -- lifecycle ---------------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> SandboxProcess:
        env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
        env["SANDBOX_DATABASE_URL"] = str(self.db_path)
        env["PYTHONUNBUFFERED"] = "1"
        command = [sys.executable, "-m", "sandbox", "serve", "--port", str(self.port)]
        if self.auto_ship_seconds is not None:
            command += ["--auto-ship-seconds", str(self.auto_ship_seconds)]
        if self.additive_fields:
            command.append("--additive-fields")
        self._log_file = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self._process = subprocess.Popen(
            command, cwd=REPO_DIR, env=env, stdout=self._log_file, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise SandboxError(f"sandbox exited early:\n{self.log_text()}")
            try:
                if requests.get(self.base_url + "/health", timeout=1).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.1)
        self.stop()
        raise SandboxError(f"sandbox did not answer /health in {timeout}s:\n{self.log_text()}")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=5)
        self._process = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        self.http.close()
        shutil.rmtree(self._tmpdir, ignore_errors=True)

    def __enter__(self) -> SandboxProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-5000:]
        except OSError:
            return ""

    # -- control API -------------------------------------------------------------------

    def control(self, method: str, path: str, json: Any = None, **params: Any) -> JSON:
        response = self.http.request(
            method, self.control_url + path, json=json, params=params or None, timeout=30
        )
        if response.status_code >= 400:
            raise SandboxError(f"{method} {path} -> {response.status_code}: {response.text}")
        answer = response.json()
        if not isinstance(answer, dict):
            raise SandboxError(f"{method} {path} answered {answer!r}, not a JSON object")
        return answer

    def reset(self, *, keep_accounts: bool = False) -> None:
        self.control("POST", "/reset", {"keep_accounts": keep_accounts})

    def register_client(
        self, client_id: str, secret: str, redirect_url: str, name: str = ""
    ) -> JSON:
        body = {
            "client_id": client_id,
            "client_secret": secret,
            "redirect_url": redirect_url,
            "name": name,
        }
        return self.control("POST", "/clients", body)

    def create_seller(self, username: str, password: str, name: str = "") -> JSON:
        return self.control(
            "POST", "/sellers", {"username": username, "password": password, "name": name}
        )

    def mint_code(
        self, client_id: str, seller: str, redirect_url: str | None = None, state: str = ""
    ) -> str:
        """A fresh authorization code, exactly as the seller's Approve would give."""
        body = {"client_id": client_id, "seller": seller, "redirect_url": redirect_url}
        return _field(self.control("POST", "/codes", {**body, "state": state}), "code", str)

    def mint_tokens(self, client_id: str, seller: str) -> JSON:
        """A new grant's token response (access_token, refresh_token, ..., grant_id)."""
        return self.control("POST", "/tokens", {"client_id": client_id, "seller": seller})

    def set_faults(self, *rules: JSON, **rule: Any) -> list[JSON]:
        """Add fault rules: ``set_faults(endpoint="put_order", kind="500", count=2)`` or
        ``set_faults({...}, {...})``. Returns all rules now active."""
        specs = list(rules) + ([rule] if rule else [])
        return _field(self.control("POST", "/faults", {"faults": specs}), "faults", list)

    def faults(self) -> list[JSON]:
        return _field(self.control("GET", "/faults"), "faults", list)

    def clear_faults(self) -> None:
        self.control("DELETE", "/faults")

    def shift_clock(self, seconds: float) -> JSON:
        return self.control("POST", "/clock", {"shift_seconds": seconds})

    def set_rotation(self, enabled: bool) -> None:
        self.control("POST", "/rotation", {"enabled": enabled})

    def set_auto_ship(self, seconds: float | None) -> None:
        self.control("POST", "/auto-ship", {"seconds": seconds})

    def set_additive_fields(self, enabled: bool) -> None:
        """Add fields the contract does not name to every answer (until reset)."""
        self.control("POST", "/additive-fields", {"enabled": enabled})

    def set_retry_grace(self, seconds: float) -> None:
        """How long after a 429/503 a request still counts as already in flight."""
        self.control("POST", "/retry-grace", {"seconds": seconds})

    def readings(self, **points: str) -> dict[str, str]:
        """Switch points where the documents are silent to reading ``"A"`` or ``"B"``
        (``import_cron="B"``; ``all="B"`` first, then single points); answers every point's
        reading. Reset puts all back to A. With no points: only reads them."""
        if not points:
            return _field(self.control("GET", "/readings"), "readings", dict)
        return _field(self.control("POST", "/readings", points), "readings", dict)

    def readings_all(self, reading: str) -> dict[str, str]:
        """Every point to ``reading`` (``"A"`` or ``"B"``)."""
        return self.readings(all=reading)

    def violations(self, **params: Any) -> JSON:
        """``{"total", "by_kind", "recent"}``: the client's breaches of the contract's rules."""
        return self.control("GET", "/violations", **params)

    def revoke(self, seller: str, client_id: str | None = None) -> int:
        body = {"client_id": client_id} if client_id else {}
        return _field(self.control("POST", f"/sellers/{seller}/revoke", body), "revoked", int)

    def expire_tokens(self, seller: str | None = None) -> int:
        return _field(
            self.control("POST", "/tokens/expire", {"seller": seller} if seller else {}),
            "expired",
            int,
        )

    def ship(self, mp_order_number: str, **spec: Any) -> JSON:
        """Simulated seller ships: ``lines=[{"mp_line_number", "quantity", "split"}]``,
        ``carrier``, ``split``, ``bad`` (see sandbox/README.md). Returns the fulfillments."""
        return self.control("POST", f"/orders/{mp_order_number}/ship", spec)

    def cancel(self, mp_order_number: str, **spec: Any) -> JSON:
        return self.control("POST", f"/orders/{mp_order_number}/cancel", spec)

    def state(self, **params: Any) -> JSON:
        return self.control("GET", "/state", **params)

    def order(self, mp_order_number: str, **params: Any) -> JSON:
        return self.control("GET", f"/orders/{mp_order_number}", **params)

    def requests_log(self, **params: Any) -> list[JSON]:
        """Recent requests (``endpoint=``, ``path=``, ``since_seq=``, ``limit=``)."""
        return _field(self.control("GET", "/requests", **params), "requests", list)

    # -- Authentication and Platform API (issue 12; sandbox/README.md) -------------------

    @property
    def platform_url(self) -> str:
        """Base of the Authentication and Platform APIs (the app's PLATFORM_API_BASE_URL)."""
        return self.base_url + "/api.php"

    def outbox(self, to: str | None = None, limit: int = 50) -> list[JSON]:
        """E-mails the platform sent, latest first: ``to``, ``subject``, ``body``, ``code``."""
        params = {"limit": limit, **({"to": to} if to else {})}
        return _field(self.control("GET", "/outbox", **params), "emails", list)

    def twofa_code(self, to: str) -> str:
        """The code in the latest two-factor e-mail to ``to``."""
        emails = self.outbox(to=to, limit=1)
        assert emails, f"no e-mail to {to}"
        return _field(emails[0], "code", str)

    def api_user_create(
        self,
        username: str,
        password: str,
        email: str,
        account_ids: list[str] | tuple[str, ...] = (),
        accounts: list[str] | tuple[str, ...] = (),
    ) -> JSON:
        """Upsert a Platform API user reaching ``account_ids`` and the accounts named
        ``accounts`` (created when missing)."""
        body = {
            "username": username,
            "password": password,
            "email": email,
            "account_ids": list(account_ids),
            "accounts": list(accounts),
        }
        return self.control("POST", "/api-users", body)

    def api_token_revoke(self, username: str | None = None, token_name: str | None = None) -> int:
        body = {k: v for k, v in {"username": username, "token_name": token_name}.items() if v}
        return _field(self.control("POST", "/api-tokens/revoke", body), "revoked", int)

    def platform_login(self, username: str, password: str, email: str, name: str = "") -> str:
        """Both login steps (the code read from the outbox); the API token."""
        body = {"username": username, "password": password, "method": "token"}
        first = self.http.post(self.platform_url + "/login", json=body, timeout=10)
        assert first.status_code == 200, first.text
        second = self.http.post(
            self.platform_url + "/login",
            json={**body, "twofa_token": self.twofa_code(email), "name": name},
            timeout=10,
        )
        assert second.status_code == 200, second.text
        return _field(second.json(), "token", str)

    def db_create(
        self,
        name: str,
        *,
        account_name: str | None = None,
        account_id: str | None = None,
        rows: list[JSON] | None = None,
        fields: list[str] | None = None,
        generate: int = 0,
    ) -> JSON:
        """A database with exactly ``rows`` (and/or ``generate`` generated products);
        ``{"id", "account_id", "name", "fields", "row_count", ...}`` (ids as numbers)."""
        body: dict[str, Any] = {"name": name, "rows": rows or [], "generate": generate}
        if account_id is not None:
            body["account_id"] = account_id
        else:
            body["account_name"] = account_name or name
        if fields is not None:
            body["fields"] = fields
        return self.control("POST", "/dbs", body)

    def db_rows(self, db_id: int | str, page: int = 1, per_page: int = 100) -> list[JSON]:
        return _field(
            self.control("GET", f"/dbs/{db_id}/rows", page=page, per_page=per_page), "rows", list
        )

    def db_rows_change(
        self,
        db_id: int | str,
        rows: list[JSON] | None = None,
        add: list[JSON] | None = None,
        delete: list[str] | None = None,
    ) -> JSON:
        """``rows``: changes by ``id`` (e.g. ``{"id": "DS-000001", "price": "9.99"}``);
        ``add``: new rows; ``delete``: ids. → ``{"updated", "added", "deleted", "row_count"}``."""
        body = {"rows": rows or [], "add": add or [], "delete": delete or []}
        return self.control("POST", f"/dbs/{db_id}/rows", body)

    def db_generate(
        self, db_id: int | str, rows: int, seed: int = 1, sku_prefix: str = "", replace: bool = True
    ) -> int:
        """Load a generated catalog of ``rows`` products; the database's row count."""
        body = {"rows": rows, "seed": seed, "sku_prefix": sku_prefix, "replace": replace}
        return _field(self.control("POST", f"/dbs/{db_id}/generate", body), "row_count", int)

    def export_run(self, export_id: int | str) -> JSON:
        """Run an export now, synchronously (delivery retries included); the run with its
        ``status``, ``rows``, ``attempts``, ``error_flag`` and ``logs``."""
        return self.control("POST", f"/exports/{export_id}/run")

    def export_state(self, export_id: int | str) -> JSON:
        """``{"export": <the Export object>, "runs": [latest first]}``."""
        return self.control("GET", f"/exports/{export_id}")

    def export_run_file(self, run_id: int | str) -> bytes:
        """The file a run wrote, byte for byte."""
        response = self.http.get(f"{self.control_url}/export-runs/{run_id}/file", timeout=30)
        if response.status_code != 200:
            raise SandboxError(f"run {run_id} file -> {response.status_code}: {response.text}")
        return response.content

    def set_rate_limit(self, group: str, limit: int, window_seconds: float = 60) -> JSON:
        """Calls allowed per API token in a window, for ``login``, ``accounts``, ``exports``,
        ``imports``; per API user for ``edrts``."""
        body = {"group": group, "limit": limit, "window_seconds": window_seconds}
        return _field(self.control("POST", "/rate-limits", body), "limits", dict)

    def seed_demo(self, rows: int = 2000) -> JSON:
        """The demo API user (marketplace-api) and its two accounts' catalogs."""
        return self.control("POST", "/seed-demo", {"rows": rows})

    def db_owner_set(self, db_id: int | str, owner: str | None) -> JSON:
        """The database's owner (an API user's username, or None): EDRTS counts a product
        created by any other API user as ``edrts_marketplace_created_product``."""
        return self.control("POST", f"/dbs/{db_id}/owner", {"owner": owner})

    # -- Event-Driven Sync, EDRTS (issue 24; sandbox/README.md) --------------------------

    @property
    def edrts_url(self) -> str:
        """Base of the EDRTS API (the app's EDRTS_BASE_URL)."""
        return self.base_url + "/catalog/rest.php"

    def edrts_state(self, **settings: Any) -> JSON:
        """``{"base_path", "settings", "rate_limit", "stats"}``; with ``delay_seconds``,
        ``batch_records``, ``fail_next``, ``lose_next`` or ``unavailable_next``, changes them
        first."""
        if settings:
            return self.control("POST", "/edrts", settings)
        return self.control("GET", "/edrts")

    def edrts_jobs(self, **params: Any) -> JSON:
        """``{"stats", "jobs": [latest first]}`` (``db_id``, ``status``, ``correlation_id``,
        ``limit``)."""
        return self.control("GET", "/edrts/jobs", **params)

    def edrts_products(self, db_id: int | str, **params: Any) -> JSON:
        """``{"db_id", "page", "per_page", "total", "products": [{"id", "fields": {field:
        {"value", "source", "edrts": {"value", "received_at", "set_at", ...} | None}}}]}``."""
        return self.control("GET", "/edrts/products", db_id=db_id, **params)

    def edrts_stamps(self, **params: Any) -> list[JSON]:
        """Every field EDRTS set, oldest first: ``[{"db_id", "id", "field", "value",
        "received_at", "set_at", "correlation_id", "batch_index"}]`` (``db_id``, ``field``,
        ``since`` (RFC 3339, set after), ``limit`` ≤ 200 000)."""
        return _field(self.control("GET", "/edrts/stamps", **params), "stamps", list)

    def edrts_wait_idle(self, timeout: float = 10.0) -> JSON:
        """Wait until no EDRTS batch is queued; the stats."""
        deadline = time.monotonic() + timeout
        while True:
            stats = _field(self.edrts_state(), "stats", dict)
            if stats["jobs"]["queued"] == 0:
                return stats
            if time.monotonic() > deadline:
                raise SandboxError(f"EDRTS batches still queued after {timeout}s: {stats}")
            time.sleep(0.05)

    # -- order API v2 --------------------------------------------------------------------

    def create_api_user(
        self, seller: str, username: str, password: str, client_id: str | None = None
    ) -> JSON:
        """An order-API user of ``seller`` (``{"username", "seller", "client_id", ...}``)."""
        body = {"seller": seller, "username": username, "password": password}
        return self.control("POST", "/v2/api-users", {**body, "client_id": client_id})

    def v2_settings(self, seller: str, **changes: Any) -> JSON:
        """``workflow``, ``import_interval_seconds``, ``import_pending`` of a seller."""
        if changes:
            return self.control("POST", f"/v2/sellers/{seller}/settings", changes)
        return self.control("GET", f"/v2/sellers/{seller}/settings")

    def v2_import(self, seller: str) -> int:
        """Run the seller's scheduled import now; the number of orders imported."""
        return _field(self.control("POST", f"/v2/sellers/{seller}/import"), "imported", int)

    def v2_orders(self, **params: Any) -> list[JSON]:
        """v2 orders with service_status, packages (``released``), cancellations, events."""
        return _field(self.control("GET", "/v2/orders", **params), "orders", list)

    def v2_order(self, mp_order_number: str, **params: Any) -> JSON:
        found = self.v2_orders(mp_order_number=mp_order_number, **params)
        assert len(found) == 1, found
        return found[0]

    def set_simulator(self, seller: str, **behaviour: Any) -> JSON:
        """Behaviour overrides the simulated seller process reads while it runs."""
        return self.control("POST", f"/v2/sellers/{seller}/simulator", behaviour)

    # -- returns and seller refunds (issue 23; sandbox/README.md) ----------------------------

    def return_operation(
        self, mp_order_number: str, mp_return_number: str, op: str, **body: Any
    ) -> JSON:
        """Play the seller: ``op`` is ``authorize`` (``rma``), ``reject`` (``reason``) or
        ``refund`` (``lines``; default: the amounts the buyer asked). Returns the return as
        the control API shows it (v1 view, refunded amounts, errors, ``read_in_state``)."""
        return self.control(
            "POST", f"/orders/{mp_order_number}/returns/{mp_return_number}/{op}", body
        )

    def seller_refund(self, mp_order_number: str, *lines: JSON, **body: Any) -> JSON:
        """A seller refund as v2 would post it; lines name ``mp_line_number`` and any of
        the amounts (missing ones 0). Returns the v1 view plus ``read_in_state``."""
        return self.control(
            "POST", f"/orders/{mp_order_number}/refunds", {"refund_lines": list(lines), **body}
        )

    def refund_resolve(self, refund_id: int | str, **body: Any) -> JSON:
        """Play the seller resolving a PAUSED refund: ``fit=True`` (cut to what the buyer
        paid) or ``refund_lines=[…]`` (as ``seller_refund``). Back to CREATED, no errors."""
        return self.control("POST", f"/refunds/{refund_id}/resolve", body)

    def returns(self, **params: Any) -> list[JSON]:
        """Latest first (``seller``, ``status``, ``limit``)."""
        return _field(self.control("GET", "/returns", **params), "returns", list)

    def refunds(self, **params: Any) -> list[JSON]:
        return _field(self.control("GET", "/refunds", **params), "refunds", list)
