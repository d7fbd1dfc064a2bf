"""The kinds of difference a pass can find, one constant each, with what it means.

Plain strings (no database choices): a new kind needs no migration. ``MONEY_KINDS`` are
never repaired by the app: staff see both versions and nothing is paid automatically.
"""

from __future__ import annotations

# Added by the rooms that find them (orders, returns and refunds, listing status).
KIND_LABELS: dict[str, str] = {}

MONEY_KINDS: frozenset[str] = frozenset()
