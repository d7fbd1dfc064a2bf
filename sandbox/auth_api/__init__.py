"""The platform's Authentication API (``/api.php/login``, ``/user/...``, ``/accounts/...``):
API users, two-factor codes e-mailed to an outbox, named API tokens, platform accounts."""
