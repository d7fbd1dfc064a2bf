"""Signals other apps listen to.

``connection_live`` (sender=PlatformConnection, connection=<PlatformConnection>) is sent
after the transaction that (re)connected a seller commits; the orders app releases work
that waited for the grant.
"""

from django.dispatch import Signal

connection_live = Signal()
