"""The portal tests share the dashboard's personas and sandbox wiring."""

from tests.dashboard.conftest import (  # noqa: F401 - fixtures, found by name
    eager_tasks,
    fast_password_hashing,
    other_seller,
    plain_user,
    platform,
    seller,
    seller_client,
    staff_client,
)
