"""Control API of the Authentication API (/sandbox/api, local only): API users, token
revocation, accounts, and the outbox."""

from django.http import HttpRequest, JsonResponse

from sandbox.auth_api.outbox import email_json, outbox_list
from sandbox.common.api_php.control import platform_control, required_text
from sandbox.common.json_bodies import BadBody, json_object_body
from sandbox.records.api_users.models import PlatformAccount, PlatformUser
from sandbox.records.api_users.tokens import tokens_revoke
from sandbox.records.api_users.users import account_upsert, api_user_upsert


def _accounts_named(body: dict) -> list[PlatformAccount]:
    ids = body.get("account_ids", [])
    names = body.get("accounts", [])
    if not isinstance(ids, list) or not isinstance(names, list):
        raise BadBody("account_ids and accounts must be lists")
    found = list(PlatformAccount.objects.filter(id__in=[int(i) for i in ids if str(i).isdigit()]))
    if len(found) != len(set(ids)):
        raise BadBody(f"account_ids: unknown account among {ids}")
    return found + [account_upsert(account_name=str(n)) for n in names]


def user_json(user: PlatformUser) -> dict:
    return {
        "username": user.username,
        "email": user.email,
        "account_ids": [str(a.id) for a in user.accounts.order_by("id")],
        "tokens": [
            {
                "name": t.name,
                "created_at": t.created_at.isoformat(),
                "last_used_at": t.last_used_at.isoformat() if t.last_used_at else None,
                "revoked": t.revoked_at is not None,
            }
            for t in user.tokens.order_by("id")
        ],
    }


@platform_control(("GET", "POST"))
def api_users(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        users = PlatformUser.objects.prefetch_related("accounts", "tokens").order_by("id")
        return JsonResponse({"users": [user_json(u) for u in users]})
    body = json_object_body(request)
    user = api_user_upsert(
        username=required_text(body, "username"),
        password=required_text(body, "password"),
        email=required_text(body, "email"),
        accounts=_accounts_named(body),
    )
    return JsonResponse(user_json(user))


@platform_control(("POST",))
def api_tokens_revoke(request: HttpRequest) -> JsonResponse:
    body = json_object_body(request)
    username, token_name = body.get("username"), body.get("token_name")
    if not username and token_name is None:
        raise BadBody("username or token_name is required")
    return JsonResponse({"revoked": tokens_revoke(username=username, token_name=token_name)})


@platform_control(("GET", "POST"))
def accounts(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        account = account_upsert(
            account_name=required_text(json_object_body(request), "account_name")
        )
        return JsonResponse({"id": str(account.id), "account_name": account.account_name})
    rows = PlatformAccount.objects.prefetch_related("dbs").order_by("id")
    return JsonResponse(
        {
            "accounts": [
                {
                    "id": str(a.id),
                    "account_name": a.account_name,
                    "db_ids": [str(db.id) for db in a.dbs.all()],
                }
                for a in rows
            ]
        }
    )


@platform_control(("GET",))
def outbox(request: HttpRequest) -> JsonResponse:
    try:
        limit = max(1, min(int(request.GET.get("limit", 50)), 500))
    except ValueError as exc:
        raise BadBody("limit must be a whole number") from exc
    emails = outbox_list(to=request.GET.get("to"), limit=limit)
    return JsonResponse({"emails": [email_json(e) for e in emails]})
