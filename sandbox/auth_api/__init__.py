"""The platform's Authentication API (``/api.php/login``, ``/user/...``, ``/accounts/...``):
signing in with a code e-mailed to the outbox, named API tokens, the accounts a user reaches
(the records themselves: ``records.api_users``)."""
