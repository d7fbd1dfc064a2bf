"""Tests of marketplace/catalog/feeds/."""
