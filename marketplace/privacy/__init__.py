"""Buyers' personal data: retention (a pseudonym once an order is long closed), erasure
and export on request, and the pruning of tables that grow with traffic.

It reads and writes orders and returns (and prunes the portal's pull requests), so it
ranks above them (tests/test_layout.py); nothing imports it but the URLs and beat.
"""
