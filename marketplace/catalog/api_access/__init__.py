"""The marketplace's own API user at the platform: its two-step sign-in (``sign_in``), its
token kept encrypted and the platform clients built on it (``api_user``), and the staff
page that signs it in (``views``). Not a page guard: those are ``marketplace/access.py``
and ``sellers/access.py``."""
