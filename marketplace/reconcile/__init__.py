"""Reconciliation with the platform: compare what we hold with what the platform holds,
repair what can be repaired without guessing, and record every finding for staff."""
