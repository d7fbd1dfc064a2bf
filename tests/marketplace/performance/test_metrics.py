"""/metrics counts the sellers over each performance limit, and the scorecards' age."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client, override_settings
from prometheus_client.parser import text_string_to_metric_families

from marketplace.performance.refresh import scorecards_refresh
from tests.marketplace.performance.builders import NOW, known_data

pytestmark = pytest.mark.django_db
TOKEN = "t" * 40


def _samples(client: Client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with override_settings(METRICS_TOKEN=TOKEN):
        response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def test_sellers_over_each_limit_are_counted(settings: Any, client: Client) -> None:
    settings.PERFORMANCE_MIN_SAMPLE = 1
    before = _samples(client)
    assert (
        before[("marketplace_sellers_over_performance_limit", (("measure", "late_shipment"),))] == 0
    )
    assert before[("marketplace_performance_scorecards_age_seconds", ())] == 0
    known_data()
    scorecards_refresh(now=NOW - timedelta(minutes=5))
    after = _samples(client)
    # Alice only: late 50 %, valid tracking 67 %; Bob ships on time with valid tracking.
    assert (
        after[("marketplace_sellers_over_performance_limit", (("measure", "late_shipment"),))] == 1
    )
    assert (
        after[("marketplace_sellers_over_performance_limit", (("measure", "valid_tracking"),))] == 1
    )
    assert (
        after[("marketplace_sellers_over_performance_limit", (("measure", "listing_refusal"),))]
        == 0
    )
    assert after[("marketplace_performance_scorecards_age_seconds", ())] > 0
