"""The carriers the sandbox's sellers ship with, and tracking numbers in each one's format
(UPS ``1Z``+16 letters or digits, USPS 22 digits, FedEx 12 digits, DHL 10 digits).

Shared by shipping by hand in the sandbox (``orders_v2.by_hand``) and the simulated seller
process (``seller_sim``), so both make the same good and bad shipments."""

import secrets
import string
from collections.abc import Callable, Sequence

CARRIERS = ("UPS", "USPS", "FedEx", "DHL")
# A carrier no marketplace knows (the ``unknown_carrier`` fault).
UNKNOWN_CARRIER = "Acme Parcel Express"

Choice = Callable[[Sequence[str]], str]


def tracking_number(carrier: str, choice: Choice = secrets.choice) -> str:
    """A tracking number in ``carrier``'s format; ``choice`` picks each character (a seeded
    ``random.Random().choice`` makes them repeatable)."""

    def digits(count: int) -> str:
        return "".join(choice(string.digits) for _ in range(count))

    if carrier == "UPS":
        alphabet = string.ascii_uppercase + string.digits
        return "1Z" + "".join(choice(alphabet) for _ in range(16))
    if carrier == "USPS":
        return "9400" + digits(18)
    if carrier == "FedEx":
        return digits(12)
    if carrier == "DHL":
        return digits(10)
    raise ValueError(f"no tracking number format for {carrier!r}")


def bad_tracking_number(carrier: str) -> str:
    """A tracking number in the wrong format for ``carrier`` (the ``bad_tracking_number``
    fault)."""
    return {"UPS": "1Z12-BAD", "USPS": "94001", "FedEx": "FDX-12AB", "DHL": "DHL#123"}.get(
        carrier, "BAD-TRACKING"
    )
