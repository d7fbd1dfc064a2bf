"""The fields the outbox engine works on, shared by every kind's table."""

from __future__ import annotations

from django.db import models


class OutboxItem(models.Model):
    """A piece of work for the platform: how it is going, and who is sending it now.

    Abstract: each kind keeps its own table (an order's sync row, a return's step, a
    seller's EDRTS sender) and adds what it needs to the engine's fields.
    """

    # Attempts for the current work; failures count towards the dead letter (a 429 does
    # not: the platform said when to come back, nothing is wrong with the work).
    attempts = models.PositiveIntegerField(default=0)
    failures = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # The claim of the worker sending right now (no row lock is held across HTTP).
    claim_token = models.CharField(max_length=32, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_error_status = models.PositiveSmallIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
