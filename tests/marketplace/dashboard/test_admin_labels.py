"""Django admin names every model in plain English: no "entrys", "sents", "o auth" or
"skus" (Django adds an "s" to the class name's words unless a model says otherwise)."""

from __future__ import annotations

import re

import pytest
from django.apps import apps
from django.contrib import admin
from django.db.models import Model
from django.test import Client
from django.utils.text import capfirst

OURS = (
    "sellers",
    "platform",
    "orders",
    "returns",
    "dashboard",
    "catalog",
    "portal",
    "privacy",
    "reconcile",
)
# A plural Django made by adding "s" where English does not.
WRONG_PLURALS = re.compile(r"(?:[^aeiou]ys|sss|sents|xs|chs|shs|skus|apis?\b|\bo auth)\b")


def our_models() -> list[type[Model]]:
    return [m for m in apps.get_models() if m._meta.app_label in OURS]


@pytest.mark.parametrize("model", our_models(), ids=lambda m: m._meta.label)
def test_every_model_has_a_plural_a_person_would_write(model: type[Model]) -> None:
    plural = str(model._meta.verbose_name_plural)
    assert not WRONG_PLURALS.search(plural), plural


@pytest.mark.django_db
def test_the_admin_index_lists_models_by_their_plain_plurals(admin_client: Client) -> None:
    body = admin_client.get("/admin/").content.decode()
    assert "API keys" in body
    assert "Api keys" not in body
    assert "Refund ledger entries" in body
    for model in our_models():
        if admin.site.is_registered(model):
            assert capfirst(str(model._meta.verbose_name_plural)) in body
