"""The order services (writes). Import from the modules; the public ones are listed here.

intake:      order_create, order_state_change, order_cancel
push:        the order push kind of marketplace.outbox; order_push, orders_push,
             orders_push_drain
push_recovery: order_sync_sweep, orders_release_for_seller, order_sync_retry,
             seller_failed_orders_retry
outbox:      order_sync_create, order_sync_mark_changed, push_enqueue (rings PUSH_DOORBELL)
pull:        orders_pull (one seller's listing; marketplace.sync runs it)
fulfillment: order_fulfillment_pull, order_fulfillment_apply, order_problems_report,
             order_settle
api_keys:    api_key_create, api_key_authenticate, api_key_revoke
"""
