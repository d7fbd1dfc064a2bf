"""OAuth and the marketplace-facing Order Source API (v1): authorize, access_token, orders,
fulfillments, error reports; grants, the listing cursor, the history seed, its control and
inspection views. Django app label ``sandbox`` (its tables and migrations keep that name)."""
