"""Each seller's pull state, from the four tables that held it, into ``SellerSync``.

From ``sellers.PullSchedule``: the schedule (next pull, why, idle steps, queued at; its
``failures`` and ``last_pulled_at`` count the same pulls as the pull state's
``consecutive_failures`` and ``last_finished_at``: the larger / later is kept). From
``orders.SellerPullState``: the cursor, an interrupted pull's resume point, the orders to
read again, the lease, the outcome. From ``returns.SellerReturnsPullState``: the returns
watermark, each listing's last error and when it last finished (not its lease: the
after-sale pull now runs under the seller's one lease; nor its ``last_error``, only the
two listings' errors joined, each kept on its own). From ``portal.SellerPullRequest``:
each seller's latest Pull now (the rate limit reads only that one; older ones were pruned
after a week anyway). ``started_at`` (new): the connect of a seller with a schedule row
started it, so it is their connection's ``connected_at``.

Set-based: one INSERT of a row per seller who has any of them, then one UPDATE per
source table. Reversible: the old rows are written back from ``SellerSync``.
"""

from django.db import migrations

FORWARD = [
    # One row per seller who has any state.
    """
    INSERT INTO sync_sellersync (
        seller_id, next_pull_at, reason, idle_steps, queued_at, claim_token, lease_until,
        cursor, resume_cursor, resume_since, resume_started_at, retry_numbers,
        returns_watermark, returns_error, returns_failed_at, refunds_error,
        refunds_failed_at, after_sale_finished_at, consecutive_failures, last_started_at,
        last_finished_at, last_success_at, last_error, pull_now_requested_at, updated_at
    )
    SELECT seller_id, NULL, '', 0, NULL, '', NULL, NULL, '', NULL, NULL, '[]',
           NULL, '', NULL, '', NULL, NULL, 0, NULL, NULL, NULL, '', NULL, CURRENT_TIMESTAMP
    FROM (
        SELECT seller_id FROM sellers_pullschedule
        UNION SELECT seller_id FROM orders_sellerpullstate
        UNION SELECT seller_id FROM returns_sellerreturnspullstate
        UNION SELECT seller_id FROM portal_sellerpullrequest
    ) AS sellers
    """,
    """
    UPDATE sync_sellersync SET
        cursor = s.cursor, resume_cursor = s.resume_cursor, resume_since = s.resume_since,
        resume_started_at = s.resume_started_at, retry_numbers = s.retry_numbers,
        consecutive_failures = s.consecutive_failures, claim_token = s.claim_token,
        lease_until = s.lease_until, last_started_at = s.last_started_at,
        last_finished_at = s.last_finished_at, last_success_at = s.last_success_at,
        last_error = s.last_error
    FROM orders_sellerpullstate AS s WHERE s.seller_id = sync_sellersync.seller_id
    """,
    """
    UPDATE sync_sellersync SET
        next_pull_at = p.next_pull_at, reason = p.reason, idle_steps = p.idle_steps,
        queued_at = p.queued_at,
        consecutive_failures = CASE WHEN p.failures > sync_sellersync.consecutive_failures
            THEN p.failures ELSE sync_sellersync.consecutive_failures END,
        last_finished_at = CASE
            WHEN sync_sellersync.last_finished_at IS NULL THEN p.last_pulled_at
            WHEN p.last_pulled_at > sync_sellersync.last_finished_at THEN p.last_pulled_at
            ELSE sync_sellersync.last_finished_at END
    FROM sellers_pullschedule AS p WHERE p.seller_id = sync_sellersync.seller_id
    """,
    # A schedule row was started by the seller's connect (in its transaction): the sync's
    # tick need not start it again.
    """
    UPDATE sync_sellersync SET started_at = c.connected_at
    FROM sellers_platformconnection AS c, sellers_pullschedule AS p
    WHERE c.seller_id = sync_sellersync.seller_id AND p.seller_id = c.seller_id
    """,
    """
    UPDATE sync_sellersync SET
        returns_watermark = r.returns_watermark, returns_error = r.returns_error,
        returns_failed_at = r.returns_failed_at, refunds_error = r.refunds_error,
        refunds_failed_at = r.refunds_failed_at, after_sale_finished_at = r.last_finished_at
    FROM returns_sellerreturnspullstate AS r WHERE r.seller_id = sync_sellersync.seller_id
    """,
    """
    UPDATE sync_sellersync SET pull_now_requested_at = q.latest
    FROM (
        SELECT seller_id, MAX(requested_at) AS latest FROM portal_sellerpullrequest
        GROUP BY seller_id
    ) AS q WHERE q.seller_id = sync_sellersync.seller_id
    """,
]

BACKWARD = [
    """
    INSERT INTO sellers_pullschedule (
        seller_id, next_pull_at, reason, idle_steps, failures, queued_at, last_pulled_at,
        updated_at
    )
    SELECT seller_id, next_pull_at, reason, idle_steps, consecutive_failures, queued_at,
           last_finished_at, updated_at
    FROM sync_sellersync
    """,
    """
    INSERT INTO orders_sellerpullstate (
        seller_id, cursor, resume_cursor, resume_since, resume_started_at, retry_numbers,
        consecutive_failures, claim_token, lease_until, last_started_at, last_finished_at,
        last_success_at, last_error, updated_at
    )
    SELECT seller_id, cursor, resume_cursor, resume_since, resume_started_at, retry_numbers,
           consecutive_failures, claim_token, lease_until, last_started_at,
           last_finished_at, last_success_at, last_error, updated_at
    FROM sync_sellersync
    """,
    """
    INSERT INTO returns_sellerreturnspullstate (
        seller_id, returns_watermark, returns_error, returns_failed_at, refunds_error,
        refunds_failed_at, claim_token, lease_until, last_finished_at, last_error,
        updated_at
    )
    SELECT seller_id, returns_watermark, returns_error, returns_failed_at, refunds_error,
           refunds_failed_at, '', NULL, after_sale_finished_at, '', updated_at
    FROM sync_sellersync
    """,
    """
    INSERT INTO portal_sellerpullrequest (seller_id, requested_at)
    SELECT seller_id, pull_now_requested_at FROM sync_sellersync
    WHERE pull_now_requested_at IS NOT NULL
    """,
    "DELETE FROM sync_sellersync",
]


def _run(statements: list[str]):
    def run(apps, schema_editor):
        for statement in statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("sync", "0001_seller_sync"),
        ("sellers", "0006_admin_plural_names"),
        ("orders", "0006_order_list_indexes"),
        ("returns", "0004_order_delete_takes_returns"),
        ("portal", "0002_seller_notifications"),
    ]

    operations = [migrations.RunPython(_run(FORWARD), _run(BACKWARD))]
