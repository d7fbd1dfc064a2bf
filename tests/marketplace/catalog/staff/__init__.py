"""Tests of marketplace/catalog/staff/."""
