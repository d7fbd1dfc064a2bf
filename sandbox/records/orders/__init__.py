"""Marketplaces (OAuth clients), sellers, grants and their tokens, orders with their
fulfillment, error reports, returns and refunds; how the groups read and change them."""
