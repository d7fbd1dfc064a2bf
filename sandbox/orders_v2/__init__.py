"""Order API v2 (the seller-side, event-driven order API) of the sandbox.

Its own Django app (label ``sandbox_orders_v2``, own migrations) beside the
marketplace-facing interface in ``sandbox``: orders placed there become v2 orders at the
seller's scheduled import; the seller confirms, ships packages and cancels units here,
and the seller's workflow decides when the marketplace sees them (``workflow``).
"""
