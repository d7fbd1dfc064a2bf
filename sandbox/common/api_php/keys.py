"""Endpoint keys of /api.php (request log, fault rules) and the rate-limit group of each.

Fault rules name these keys, or ``platform`` for all of them (``*`` stays the order API's,
so existing order-API fault runs do not suddenly hit catalog calls).
"""

# url name -> {method -> endpoint key}
_BY_URL_NAME: dict[str, dict[str, str]] = {
    "platform_login": {"POST": "login"},
    "platform_user_accounts": {"GET": "user_accounts"},
    "platform_list_accounts": {"GET": "list_accounts"},
    "platform_account_dbs": {"GET": "account_dbs"},
    "platform_exports": {"GET": "list_exports", "POST": "add_export"},
    "platform_export": {"GET": "get_export", "PUT": "update_export", "DELETE": "delete_export"},
    "platform_export_schedule": {"PUT": "export_schedule"},
    "platform_export_run": {"POST": "export_run"},
    "platform_imports": {"GET": "list_imports", "POST": "add_import"},
    "platform_imports_auto_detected": {"GET": "auto_detected_imports"},
    "platform_import": {"GET": "get_import", "POST": "update_import", "DELETE": "delete_import"},
    "platform_import_schedule": {"PUT": "import_schedule"},
    "platform_import_delimiters": {"PUT": "import_delimiters"},
    "platform_import_file_map": {"PUT": "import_file_map"},
    # The Content API (sandbox/content_api): a fault rule can fail the reads back.
    "content_raw_data": {"GET": "raw_data"},
    "content_transformed_data": {"GET": "transformed_data"},
}
ENDPOINTS = frozenset(key for keys in _BY_URL_NAME.values() for key in keys.values())
WILDCARD = "platform"
PATH_PREFIX = "/api.php/"

GROUP_BY_ENDPOINT = {
    "login": "login",
    "user_accounts": "accounts",
    "list_accounts": "accounts",
    "account_dbs": "accounts",
    "raw_data": "content",
    "transformed_data": "content",
    **{
        key: "exports"
        for key in (
            "list_exports",
            "add_export",
            "get_export",
            "update_export",
            "delete_export",
            "export_schedule",
            "export_run",
        )
    },
    **{
        key: "imports"
        for key in (
            "list_imports",
            "add_import",
            "auto_detected_imports",
            "get_import",
            "update_import",
            "delete_import",
            "import_schedule",
            "import_delimiters",
            "import_file_map",
        )
    },
}


def endpoint_key_for(url_name: str | None, method: str | None) -> str | None:
    """The key of an /api.php endpoint, or None for any other URL name."""
    methods = _BY_URL_NAME.get(url_name or "")
    if methods is None:
        return None
    return methods.get(method or "", url_name)
