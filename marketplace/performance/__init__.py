"""Seller performance scorecards: each seller's service measures over rolling windows,
refreshed set-based by one beat job, read by the staff and seller pages."""
