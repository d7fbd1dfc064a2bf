"""Fixtures of the privacy tests: the tiny platform of the platform-client tests."""

from tests.marketplace.platform.conftest import no_embargo, tiny_platform

__all__ = ["no_embargo", "tiny_platform"]
