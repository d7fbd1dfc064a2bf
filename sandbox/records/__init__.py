"""The platform's records, which every API group reads and writes: marketplaces (OAuth
clients), sellers, grants and tokens, orders, returns and refunds (``orders``); API users,
their accounts, two-factor codes, API tokens and the outbox (``api_users``); the sellers'
databases and their product rows (``databases``). With the state machines the groups share
(an order's fulfillment, a return's or refund's change, the access an API user has).

Below every API group: it imports only ``common``, and no group imports another.

Each sub-package is a Django app that keeps the label its models were created under
(``sandbox``, ``sandbox_auth_api``, ``sandbox_catalog``), so tables and migration history
did not move when the models did: an existing sandbox database starts unchanged.
"""
