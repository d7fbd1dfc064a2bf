"""An export a failed feed set-up could not delete at the platform is remembered, shown to
staff as "clean-up pending", and deleted by the clean-up sweep once the platform answers
again: whether the delete was refused or could not even be tried (the access had just
turned to "needs sign-in")."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from marketplace.catalog import sweeps
from marketplace.catalog.api_access import api_user
from marketplace.catalog.errors import ApiAccessNeeded, CatalogError
from marketplace.catalog.feeds import database_link, provision
from marketplace.catalog.feeds.mapping import mapping_default
from marketplace.catalog.models import CatalogSource, PlatformApiAccess
from marketplace.platform.exports import ExportsApi
from marketplace.platform.models import PlatformCall
from sellers.models import Seller
from tests.marketplace.catalog.platform import API_USER, CatalogWorld, api_sign_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def linked(world: CatalogWorld, seller: Seller, staff_user: Any) -> CatalogSource:
    api_sign_in(world, staff_user)
    return database_link.seller_database_link(
        seller=seller, account_id=world.account_id, db_id=world.db_id, actor=staff_user
    )


def feed_set_up(source: CatalogSource) -> CatalogSource:
    return provision.feed_provision(
        source=source, feed=provision.FeedSettings(mapping=mapping_default())
    )


def platform_export_ids(source: CatalogSource) -> list[str]:
    with api_user.platform_api() as api:
        return [str(export["id"]) for export in api.exports.list(db_id=source.db_id)]


def staff_catalog_page(staff_user: Any, seller: Seller) -> str:
    client = Client()
    client.force_login(staff_user)
    response = client.get(f"/dashboard/catalog/sellers/{seller.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def test_an_export_whose_clean_up_delete_is_refused_is_deleted_by_the_sweep_later(
    linked: CatalogSource, world: CatalogWorld, seller: Seller, staff_user: Any
) -> None:
    # Given a set-up that fails after the create, and a platform refusing every delete
    world.sandbox.set_faults(
        {"endpoint": "export_schedule", "kind": "500", "count": 1},
        {"endpoint": "delete_export", "kind": "500"},
    )

    with pytest.raises(CatalogError):
        feed_set_up(linked)

    # Then the export left at the platform is remembered and shown to staff
    linked.refresh_from_db()
    assert not linked.has_feed
    (left,) = platform_export_ids(linked)
    assert linked.export_cleanup_id == left
    page = staff_catalog_page(staff_user, seller)
    assert "Clean-up pending" in page
    assert left in page

    # While the platform still refuses, the sweep keeps it pending
    assert sweeps.provisioned_cleanup_sweep() == 0
    linked.refresh_from_db()
    assert linked.export_cleanup_id == left

    # Once the platform answers again, the sweep deletes it and forgets it
    world.sandbox.clear_faults()
    assert sweeps.provisioned_cleanup_sweep() == 1

    assert platform_export_ids(linked) == []
    linked.refresh_from_db()
    assert linked.export_cleanup_id == ""
    assert "Clean-up pending" not in staff_catalog_page(staff_user, seller)


def test_an_export_created_just_before_a_401_is_deleted_once_staff_sign_in_again(
    linked: CatalogSource,
    world: CatalogWorld,
    seller: Seller,
    staff_user: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the API token revoked right after the create (the schedule call gets a 401)
    schedule = ExportsApi.schedule

    def revoked_then_schedule(self: ExportsApi, **kwargs: Any) -> Any:
        world.sandbox.api_token_revoke(username=API_USER[0])
        return schedule(self, **kwargs)

    monkeypatch.setattr(ExportsApi, "schedule", revoked_then_schedule)

    with pytest.raises(ApiAccessNeeded):
        feed_set_up(linked)
    monkeypatch.undo()

    # Then the delete could not be tried: the export is remembered for the sweep
    assert PlatformApiAccess.objects.get().state == "needs_sign_in"
    linked.refresh_from_db()
    assert not linked.has_feed
    assert linked.export_cleanup_id
    assert "Clean-up pending" in staff_catalog_page(staff_user, seller)

    # While sign-in is needed the sweep waits without a call
    calls = PlatformCall.objects.count()
    assert sweeps.provisioned_cleanup_sweep() == 0
    assert PlatformCall.objects.count() == calls

    # Once staff signed in again, the sweep deletes the export at the platform
    api_sign_in(world, staff_user)
    assert linked.export_cleanup_id in platform_export_ids(linked)
    assert sweeps.provisioned_cleanup_sweep() == 1

    assert platform_export_ids(linked) == []
    linked.refresh_from_db()
    assert linked.export_cleanup_id == ""


def test_a_new_set_up_first_deletes_the_export_an_earlier_one_left_pending(
    linked: CatalogSource, world: CatalogWorld
) -> None:
    # Given an export left pending by a failed set-up, the platform still refusing deletes
    world.sandbox.set_faults(
        {"endpoint": "export_schedule", "kind": "500", "count": 1},
        {"endpoint": "delete_export", "kind": "500"},
    )
    with pytest.raises(CatalogError):
        feed_set_up(linked)
    linked.refresh_from_db()
    (left,) = platform_export_ids(linked)

    # When staff set the feed up again: it waits rather than leave a second export behind
    with pytest.raises(CatalogError) as refused:
        feed_set_up(linked)

    assert "could not be deleted yet" in str(refused.value)
    assert platform_export_ids(linked) == [left]
    linked.refresh_from_db()
    assert linked.export_cleanup_id == left
    assert "could not be deleted yet" in linked.last_error

    # Once the platform deletes again, the set-up removes the old export and makes the new
    world.sandbox.clear_faults()
    source = feed_set_up(linked)

    assert source.has_feed
    assert platform_export_ids(linked) == [source.export_id]
    assert source.export_id != left
    source.refresh_from_db()
    assert (source.export_cleanup_id, source.last_error) == ("", "")
