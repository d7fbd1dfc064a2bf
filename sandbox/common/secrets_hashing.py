"""Hashing of tokens, codes, client secrets and seller passwords (the DB holds no raw secret)."""

import hashlib
import hmac
import secrets

# A simulator: a salted fast hash keeps sign-in quick in tests; not for real passwords.
_PASSWORD_ITERATIONS = 1000


def token_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def new_token(prefix: str) -> str:
    return f"{prefix}_{secrets.token_urlsafe(32)}"


def secret_matches(raw: str, stored_hash: str) -> bool:
    return hmac.compare_digest(token_hash(raw), stored_hash)


def password_hash(password: str) -> str:
    salt = secrets.token_hex(8)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), _PASSWORD_ITERATIONS)
    return f"{salt}${digest.hex()}"


def password_matches(password: str, stored: str) -> bool:
    salt, _, digest = stored.partition("$")
    candidate = hashlib.pbkdf2_hmac(
        "sha256", password.encode(), salt.encode(), _PASSWORD_ITERATIONS
    ).hex()
    return hmac.compare_digest(candidate, digest)
