from django.apps import AppConfig


class ReconcileConfig(AppConfig):
    """Reconciliation passes per seller, their findings, and the daily schedule."""

    name = "marketplace.reconcile"
    label = "reconcile"
    default_auto_field = "django.db.models.BigAutoField"
