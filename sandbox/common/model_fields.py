"""A model's field and column by name, typed: the raw-SQL writers (EDRTS's worker, the imports'
runs) prepare values with the field's own ``get_db_prep_save``."""

from typing import Any

from django.db.models import Field, Model


def concrete_field(model: type[Model], name: str) -> "Field[Any, Any]":
    field = model._meta.get_field(name)
    assert isinstance(field, Field)  # a column, never a reverse relation
    return field


def column_of(model: type[Model], name: str) -> str:
    """The column a concrete field is stored in."""
    column = concrete_field(model, name).column
    assert column is not None  # a concrete field always has one
    return column
