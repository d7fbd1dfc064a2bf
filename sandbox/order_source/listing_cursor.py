"""The listing's opaque cursor: the last sort key of a page, as a string that only
survives the trip when the client URL-encodes it.

Standard base64 (``+``, ``/``, ``=``) behind the prefix ``c+``: sent raw in a query
string, the ``+`` reads as a space and the cursor is refused (400), so a client that
does not encode it breaks here rather than on a platform whose cursors happen to need it.
"""

import base64
import binascii
import json
from datetime import datetime

PREFIX = "c+"


def cursor_encode(sort_at: datetime, order_id: int) -> str:
    raw = json.dumps([sort_at.isoformat(), order_id]).encode()
    return PREFIX + base64.b64encode(raw).decode()


def cursor_decode(cursor: str) -> tuple[datetime, int] | None:
    """The (sort_at, id) a cursor holds, or None if this endpoint did not return it."""
    if not cursor.startswith(PREFIX):
        return None
    try:
        raw = base64.b64decode(cursor.removeprefix(PREFIX), validate=True)
        sort_at, order_id = json.loads(raw)
        parsed = datetime.fromisoformat(sort_at)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        return None
    if parsed.tzinfo is None or not isinstance(order_id, int):
        return None
    return parsed, order_id
