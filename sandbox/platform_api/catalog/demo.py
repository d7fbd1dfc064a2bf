"""The demo data issue 12 pins: the API user ``marketplace-api`` reaching one platform
account per demo seller, each with a database of ~2 000 realistic products. Idempotent:
a database that already has rows is left as it is (so changes made while playing stay)."""

from sandbox.platform_api.catalog.databases import db_create, db_generate
from sandbox.records.api_users.users import account_upsert, api_user_upsert
from sandbox.records.databases.models import CatalogDatabase

API_USER = ("marketplace-api", "marketplace-api-pass", "api@marketplace.example")
# (account name, database name, SKU prefix, seed): one per demo seller of the marketplace.
DEMO_ACCOUNTS = (
    ("Demo Seller", "Demo Seller catalog", "DS", 1),
    ("Second Demo Seller", "Second Demo Seller catalog", "SD", 2),
)
DEMO_ROWS = 2000


def demo_seed(*, rows: int = DEMO_ROWS) -> dict:
    accounts = []
    for account_name, db_name, prefix, seed in DEMO_ACCOUNTS:
        account = account_upsert(account_name=account_name)
        db = CatalogDatabase.objects.filter(account=account, name=db_name).first()
        if db is None:
            db = db_create(account=account, name=db_name)
        if not db.rows.exists():
            db_generate(db=db, count=rows, seed=seed, sku_prefix=prefix)
        accounts.append(
            {"account_id": str(account.id), "account_name": account_name, "db_id": str(db.id)}
        )
    username, password, email = API_USER
    api_user_upsert(
        username=username,
        password=password,
        email=email,
        accounts=[account_upsert(account_name=name) for name, *_ in DEMO_ACCOUNTS],
    )
    return {"api_user": username, "email": email, "accounts": accounts}
