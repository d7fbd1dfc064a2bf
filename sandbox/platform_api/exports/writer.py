"""The export file, written exactly as the settings say (each rule is our choice where
the contract names only the setting; README, "Export files").

Rows: ``export_selector`` → ``row_sort``/``row_order`` (as numbers when every value is a
number, else as text; stable) → ``deduplicate_field_name`` (the first row of each value
combination stays) → ``row_limit`` (0 = all) → ``export_fields`` (an empty ``field_name``
writes an empty column; no fields = every database field under its own name) →
``strip_characters`` (removed from values). Then the format, ``file_header`` before and
``file_footer`` after (each followed by a newline unless it ends with one), the encoding,
the compression (gzip with mtime 0; zip with a fixed 1980-01-01 date): the same settings
and rows always give the same bytes.
"""

import gzip
import io
import json
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from sandbox.platform_api.exports.selector import selector_parse
from sandbox.platform_api.exports.settings import DELIMITERS, ENCODINGS, strip_character

CONTENT_TYPES = {"delimited": "text/csv", "json": "application/json", "xml": "application/xml"}
COMPRESSED_TYPES = {"gzip": "application/gzip", "zip": "application/zip"}
XML_ROOT, XML_ITEM = "products", "product"


@dataclass(frozen=True)
class ExportFile:
    content: bytes
    content_type: str
    rows: int


def _sort_key(values: list[str]) -> tuple:
    numbers = []
    for value in values:
        try:
            numbers.append(Decimal(value))
        except InvalidOperation:
            return (False, values)
    return (True, numbers)


def rows_select(
    settings: dict, rows: Iterable[dict[str, str]], db_fields: list[str], used: set[str]
) -> list:
    """The rows to write, each cut down to the ``used`` fields (a 100 000-row catalog's full
    rows would otherwise all sit in memory at once)."""
    keep = selector_parse(settings["export_selector"], db_fields)
    sort_field = settings["row_sort"]
    dedupe = settings["deduplicate_field_name"]
    needed = used | set(dedupe) | ({sort_field} if sort_field else set())
    chosen = [{f: row.get(f, "") for f in needed} for row in rows if keep(row)]
    if sort_field:
        values = [row.get(sort_field, "") for row in chosen]
        _, keys = _sort_key(values)
        # Stable both ways: ties keep the database's order, DESC included.
        order = sorted(
            range(len(chosen)), key=lambda i: keys[i], reverse=settings["row_order"] == "DESC"
        )
        chosen = [chosen[i] for i in order]
    if dedupe:
        seen: set[tuple] = set()
        unique = []
        for row in chosen:
            key = tuple(row.get(f, "") for f in dedupe)
            if key not in seen:
                seen.add(key)
                unique.append(row)
        chosen = unique
    limit = int(settings["row_limit"])
    return chosen[:limit] if limit else chosen


def _strip_table(settings: dict) -> dict[int, None]:
    return {
        ord(strip_character(key, seq)): None for key, seq in settings["strip_characters"].items()
    }


def _delimited(settings: dict, names: list[str], records: list[list[str]]) -> str:
    delimiter = DELIMITERS[settings["delimiter"]]
    enclosure, escape = settings["enclosure"], settings["escape"]
    always = settings["quoted_fields"] == "1"

    def cell(value: str) -> str:
        if not enclosure:
            # No enclosure: the escape character (if any) marks delimiters inside values.
            return value.replace(delimiter, escape + delimiter) if escape else value
        special = any(c in value for c in (delimiter, enclosure, "\n", "\r"))
        if not (always or special or (escape and escape in value)):
            return value
        esc = escape or enclosure
        if esc != enclosure:
            value = value.replace(esc, esc + esc)
        return enclosure + value.replace(enclosure, esc + enclosure) + enclosure

    lines = []
    if settings["include_column_names"] == "1":
        lines.append(delimiter.join(cell(n) for n in names))
    lines.extend(delimiter.join(cell(v) for v in record) for record in records)
    return "".join(line + "\n" for line in lines)


def _json(settings: dict, names: list[str], records: list[list[str]]) -> str:
    if settings["include_column_names"] == "1":
        data: list = [dict(zip(names, record, strict=True)) for record in records]
    else:
        data = records
    if settings["json_minify_type"] == "minify":
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def _xml_text(settings: dict, value: str) -> str:
    if settings["use_cdata"] == "1":
        return "<![CDATA[" + value.replace("]]>", "]]]]><![CDATA[>") + "]]>"
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _xml_tree(names: list[str], record: list[str]) -> dict:
    tree: dict = {}
    for name, value in zip(names, record, strict=True):
        *parents, leaf = name.split("/")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return tree


def _xml_element(settings: dict, name: str, node: dict | str, depth: int) -> list[str]:
    pad = "  " * depth
    if isinstance(node, str):
        if node:
            return [f"{pad}<{name}>{_xml_text(settings, node)}</{name}>"]
        return [f"{pad}<{name}/>"] if settings["show_empty_tags"] == "1" else []
    children = [
        line
        for key, child in node.items()
        for line in _xml_element(settings, key, child, depth + 1)
    ]
    if children:
        return [f"{pad}<{name}>", *children, f"{pad}</{name}>"]
    return [f"{pad}<{name}/>"] if settings["show_empty_parent_tags"] == "1" else []


def _xml(settings: dict, names: list[str], records: list[list[str]]) -> tuple[str, str]:
    """(document tag line or "", the body)."""
    declaration = ""
    if settings["xml_write_document_tag"] == "1":
        declaration = f'<?xml version="1.0" encoding="{settings["export_encoding"]}"?>\n'
    lines = [f"<{XML_ROOT}>"]
    for record in records:
        lines.extend(_xml_element(settings, XML_ITEM, _xml_tree(names, record), 1))
    lines.append(f"</{XML_ROOT}>")
    return declaration, "".join(line + "\n" for line in lines)


def _framed(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _compress(settings: dict, data: bytes) -> bytes:
    if settings["compression"] == "gzip":
        return gzip.compress(data, mtime=0)
    if settings["compression"] == "zip":
        inner = settings["zip_inner_file_name"] or settings["file_name"].removesuffix(".zip")
        info = zipfile.ZipInfo(inner or "export", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr(info, data)
        return buffer.getvalue()
    return data


def export_file(
    *,
    settings: dict,
    fields: list[tuple[str, str]],
    rows: Iterable[dict[str, str]],
    db_fields: list[str],
) -> ExportFile:
    """``fields``: (source field_name, export_field_name) in sort order."""
    pairs = fields or [(f, f) for f in db_fields]
    chosen = rows_select(settings, rows, db_fields, {src for src, _ in pairs if src})
    names = [name for _, name in pairs]
    table = _strip_table(settings)
    records = [
        [row.get(src, "").translate(table) if src else "" for src, _ in pairs] for row in chosen
    ]
    declaration = ""
    if settings["export_format"] == "json":
        body = _json(settings, names, records)
    elif settings["export_format"] == "xml":
        declaration, body = _xml(settings, names, records)
    else:
        body = _delimited(settings, names, records)
    text = declaration + _framed(settings["file_header"]) + body + _framed(settings["file_footer"])
    data = text.encode(ENCODINGS[settings["export_encoding"]], errors="replace")
    compression = settings["compression"]
    content_type = COMPRESSED_TYPES.get(compression) or CONTENT_TYPES[settings["export_format"]]
    return ExportFile(_compress(settings, data), content_type, len(records))
