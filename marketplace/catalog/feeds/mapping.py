"""The feed's columns: which of the seller's platform fields fills each listing column.

Staff edit the mapping as lines ``column = field`` (an empty field writes an empty
column, as the platform allows). The columns are the listing's own names, so the feed
file needs no second mapping on our side.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Listing columns a feed may carry, in the order the default feed writes them.
LISTING_COLUMNS = (
    "sku",
    "title",
    "description",
    "brand",
    "gtin",
    "price",
    "sale_price",
    "quantity",
    "condition",
    "product_type",
    "image_link",
    "link",
)
REQUIRED_COLUMNS = frozenset({"sku", "price", "quantity"})

# The platform's product fields (the sandbox's demo catalogs hold exactly these) are
# named like ours except the product id, which is our SKU.
DEFAULT_MAPPING: tuple[tuple[str, str], ...] = tuple(
    (column, "id" if column == "sku" else column) for column in LISTING_COLUMNS
)

_FIELD = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_ .\-]{0,99}$")


class MappingError(ValueError):
    """The mapping text is not usable; ``problems`` lists every reason."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class FeedMapping:
    pairs: tuple[tuple[str, str], ...]  # (listing column, seller's field)

    def as_text(self) -> str:
        return "\n".join(f"{column} = {field}" for column, field in self.pairs)

    def as_json(self) -> list[list[str]]:
        return [[column, field] for column, field in self.pairs]

    def export_fields(self) -> dict[str, dict[str, str]]:
        """The Export's ``export_fields`` object (``field1…``) for these columns."""
        return {
            f"field{index}": {
                "field_name": field,
                "export_field_name": column,
                "sort_order": str(index),
            }
            for index, (column, field) in enumerate(self.pairs, start=1)
        }


def mapping_default() -> FeedMapping:
    return FeedMapping(pairs=DEFAULT_MAPPING)


def mapping_from_json(value: Iterable[Sequence[object]] | None) -> FeedMapping:
    """A stored mapping (``CatalogSource.export_fields``: ``[[column, field], ...]``)."""
    if not value:
        return mapping_default()
    return FeedMapping(pairs=tuple((str(c), str(f)) for c, f in value))


def mapping_parse(text: str) -> FeedMapping:
    """``column = field`` lines → a validated mapping; raises ``MappingError``."""
    problems: list[str] = []
    pairs: list[tuple[str, str]] = []
    seen: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        column, sep, field = (part.strip() for part in line.partition("="))
        if not sep:
            problems.append(f"line {number}: write it as 'column = field'")
            continue
        if column not in LISTING_COLUMNS:
            problems.append(
                f"line {number}: '{column}' is not a listing column "
                f"(choose from {', '.join(LISTING_COLUMNS)})"
            )
            continue
        if column in seen:
            problems.append(f"line {number}: '{column}' is mapped twice")
            continue
        if field and not _FIELD.match(field):
            problems.append(f"line {number}: '{field}' is not a field name")
            continue
        seen.add(column)
        pairs.append((column, field))
    for column in sorted(REQUIRED_COLUMNS - seen):
        problems.append(f"'{column}' must be mapped: every listing needs it")
    for column, field in pairs:
        if column in REQUIRED_COLUMNS and not field:
            problems.append(f"'{column}' needs a field: an empty column would reject every row")
    if problems:
        raise MappingError(problems)
    return FeedMapping(pairs=tuple(pairs))
