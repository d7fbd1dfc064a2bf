"""Command line of the sandbox: ``python -m sandbox serve|register-client|create-seller``."""

import argparse
import os
import sys
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m sandbox", description=__doc__)
    parser.add_argument("--db", help="SQLite path or database URL (env SANDBOX_DATABASE_URL)")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="migrate the sandbox DB and serve it with gunicorn")
    serve.add_argument("--port", type=int, default=int(os.environ.get("SANDBOX_PORT", "8100")))
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--db", dest="sub_db", help="SQLite path or database URL")
    serve.add_argument("--threads", type=int, default=16)
    serve.add_argument(
        "--auto-ship-seconds",
        type=float,
        default=None,
        help="ship AWAITING_SHIPMENT orders automatically after N seconds (off by default)",
    )
    serve.add_argument(
        "--additive-fields",
        action="store_true",
        help="add fields the contract does not name to every answer (tolerance tests)",
    )
    serve.add_argument(
        "--retry-grace-seconds",
        type=float,
        default=None,
        help="in-flight grace after a 429/503 before an early retry counts (default 0.4)",
    )

    client = commands.add_parser("register-client", help="create or update a marketplace client")
    client.add_argument("--db", dest="sub_db")
    client.add_argument("--client-id", required=True)
    client.add_argument("--client-secret", required=True)
    client.add_argument("--redirect-url", required=True)
    client.add_argument("--name", default="")

    seller = commands.add_parser("create-seller", help="create or update a seller account")
    seller.add_argument("--db", dest="sub_db")
    seller.add_argument("--username", required=True)
    seller.add_argument("--password", required=True)
    seller.add_argument("--name", default="")

    api_user = commands.add_parser("create-api-user", help="create or update an order-API user")
    api_user.add_argument("--db", dest="sub_db")
    api_user.add_argument("--seller", required=True, help="the seller account it belongs to")
    api_user.add_argument("--username", required=True)
    api_user.add_argument("--password", required=True)
    api_user.add_argument("--client-id", help="numeric client id (default: kept or made up)")

    demo = commands.add_parser(
        "seed-demo", help="the Platform API's demo data: API user, accounts, 2 000-row catalogs"
    )
    demo.add_argument("--db", dest="sub_db")

    commands.add_parser("migrate", help="create or upgrade the sandbox database").add_argument(
        "--db", dest="sub_db"
    )
    return parser


def _setup_django(db: str | None) -> None:
    if db:
        os.environ["SANDBOX_DATABASE_URL"] = db
    # Forced, not setdefault: pytest-django exports the app's settings module to children.
    os.environ["DJANGO_SETTINGS_MODULE"] = "sandbox.settings"
    import django

    django.setup()


def _migrate() -> None:
    from django.conf import settings
    from django.core.management import call_command

    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith("sqlite3"):
        Path(database["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    call_command("migrate", verbosity=0, interactive=False)


def _serve(args: argparse.Namespace) -> None:
    _migrate()
    from django.db import connections

    connections.close_all()
    # Writers wait on a lock in the process, not in SQLite's sleeping busy handler.
    os.environ["SANDBOX_QUEUED_WRITERS"] = "1"
    if args.auto_ship_seconds is not None:
        os.environ["SANDBOX_AUTO_SHIP_SECONDS"] = str(args.auto_ship_seconds)
    if args.additive_fields:
        os.environ["SANDBOX_ADDITIVE_FIELDS"] = "1"
    if args.retry_grace_seconds is not None:
        os.environ["SANDBOX_RETRY_GRACE_SECONDS"] = str(args.retry_grace_seconds)
    argv = [
        sys.executable,
        "-m",
        "gunicorn",
        "sandbox.wsgi:application",
        "--bind",
        f"{args.host}:{args.port}",
        "--worker-class",
        "gthread",
        "--workers",
        "1",  # one process: faults, clock and counters live in its memory
        "--threads",
        str(args.threads),
        "--timeout",
        "300",
        "--graceful-timeout",
        "2",
        "--keep-alive",
        "30",
        "--no-control-socket",
        "--chdir",
        str(REPO_DIR),
    ]
    sys.stdout.flush()
    # Replace this process: stopping it (SIGTERM) stops gunicorn directly.
    os.execv(sys.executable, argv)  # noqa: S606


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    _setup_django(getattr(args, "sub_db", None) or args.db)
    if args.command == "serve":
        _serve(args)
        return
    _migrate()
    if args.command == "register-client":
        from sandbox.records.orders.accounts import client_upsert

        client = client_upsert(
            client_id=args.client_id,
            client_secret=args.client_secret,
            redirect_url=args.redirect_url,
            name=args.name,
        )
        print(f"client {client.client_id} registered (redirect_url {client.redirect_url})")
    elif args.command == "create-seller":
        from sandbox.records.orders.accounts import seller_upsert

        seller = seller_upsert(username=args.username, password=args.password, name=args.name)
        print(f"seller {seller.username} ready")
    elif args.command == "create-api-user":
        from sandbox.orders_v2.tokens import api_user_upsert
        from sandbox.records.orders.models import Seller

        owner = Seller.objects.filter(username=args.seller).first()
        if owner is None:
            raise SystemExit(f"no seller {args.seller!r}: create-seller first")
        user = api_user_upsert(
            seller=owner, username=args.username, password=args.password, client_id=args.client_id
        )
        print(f"order-API user {user.username} (client id {user.client_id}) for {args.seller}")
    elif args.command == "seed-demo":
        from sandbox.platform_api.catalog.demo import demo_seed

        seeded = demo_seed()
        dbs = ", ".join(f"{a['account_name']} (db {a['db_id']})" for a in seeded["accounts"])
        print(f"Platform API user {seeded['api_user']} ({seeded['email']}); {dbs}")


if __name__ == "__main__":
    main()
