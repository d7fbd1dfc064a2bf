"""What the sandbox's reset deletes of v2 (children first; the seller settings go back to
their defaults; API users stay when the reset keeps accounts)."""

from sandbox.orders_v2.models import (
    ApiToken,
    ApiUser,
    Cancellation,
    Event,
    Package,
    SellerSettings,
    V2Order,
)

ORDER_MODELS = [Event, Package, Cancellation, V2Order, ApiToken, SellerSettings]
ACCOUNT_MODELS = [ApiUser]
