"""Tests of marketplace/catalog/listing_status/."""
