"""OAuth and the marketplace-facing Order Source API (v1): authorize, access_token, orders,
fulfillments, error reports; grants, the listing cursor, the history seed, its control and
inspection views. Its records (orders, grants, returns, refunds) live in ``records.orders``."""
