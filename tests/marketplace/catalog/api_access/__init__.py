"""Tests of marketplace/catalog/api_access/."""
