"""Signals other apps listen to (the key rotation's; no business flow starts on a signal:
a (re)connect queues ``marketplace.sync``'s start by name, see ``sellers.services``).

``ciphertext_rotated`` / ``ciphertext_lost`` (sender=the model, pks=[...]) are sent by the
key rotation (``sellers.key_rotation``) after the rows' transaction: rows re-encrypted
with the current key, and rows whose ciphertext no configured key decrypts. Every model
with an ``EncryptedTextField`` has a ``ciphertext_lost`` receiver that moves such a row
to a state a person sees (tests/sellers/test_key_rotation.py checks it).
"""

from django.dispatch import Signal

ciphertext_rotated = Signal()
ciphertext_lost = Signal()
