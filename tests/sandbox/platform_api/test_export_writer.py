"""The sandbox's export writer: one test per setting, on a small database, comparing the
file a run writes byte for byte with what the settings say (sandbox/README.md, "Export
files"). Every export is made through /api.php and run through the control API."""

from __future__ import annotations

import gzip
import io
import json
import zipfile

import pytest

from tests.sandbox.platform_client import PlatformApi, platform_for
from tests.support.sandbox_process import SandboxProcess


@pytest.fixture
def api(sandbox: SandboxProcess) -> PlatformApi:
    return platform_for(sandbox)


def _fields(*pairs: str) -> list[dict]:
    """``"id>sku"`` maps database field ``id`` to column ``sku``; ``"title"`` keeps the name."""
    out = []
    for pair in pairs:
        source, _, name = pair.partition(">")
        out.append({"field_name": source, "export_field_name": name or source})
    return out


def test_default_delimited_file_quotes_only_what_needs_it(api: PlatformApi) -> None:
    assert api.file_of() == (
        b"id,title,price,quantity,brand\n"
        b'A-1,"Mug, ""Blue""",12.50,3,Acme\n'
        b"A-2,Plate\twith tab,4.00,0,\n"
        b"A-3,Bowl,7.25,12,Acme\n"
    )


def test_quoted_fields_encloses_every_value_and_name(api: PlatformApi) -> None:
    assert api.file_of(quoted_fields="1") == (
        b'"id","title","price","quantity","brand"\n'
        b'"A-1","Mug, ""Blue""","12.50","3","Acme"\n'
        b'"A-2","Plate\twith tab","4.00","0",""\n'
        b'"A-3","Bowl","7.25","12","Acme"\n'
    )


@pytest.mark.parametrize(("name", "char"), [("comma", ","), ("pipe", "|"), ("semicolon", ";")])
def test_delimiter_by_name(api: PlatformApi, name: str, char: str) -> None:
    written = api.file_of(delimiter=name, export_fields=_fields("id", "price"))

    assert written == f"id{char}price\nA-1{char}12.50\nA-2{char}4.00\nA-3{char}7.25\n".encode()


def test_tab_delimiter_encloses_values_holding_a_tab(api: PlatformApi) -> None:
    assert api.file_of(delimiter="tab", export_fields=_fields("id", "title")) == (
        b'id\ttitle\nA-1\t"Mug, ""Blue"""\nA-2\t"Plate\twith tab"\nA-3\tBowl\n'
    )


def test_enclosure_character(api: PlatformApi) -> None:
    written = api.file_of(
        enclosure="'", escape="'", quoted_fields="1", export_fields=_fields("id", "title")
    )

    assert written == (
        b"'id','title'\n'A-1','Mug, \"Blue\"'\n'A-2','Plate\twith tab'\n'A-3','Bowl'\n"
    )


def test_an_escape_other_than_the_enclosure_is_itself_escaped(api: PlatformApi) -> None:
    written = api.file_of(enclosure="'", quoted_fields="1", export_fields=_fields("title"))

    # The escape (default ") marks the enclosure and itself inside enclosed values.
    assert written == b"'title'\n'Mug, \"\"Blue\"\"'\n'Plate\twith tab'\n'Bowl'\n"


def test_escape_character_other_than_the_enclosure(api: PlatformApi) -> None:
    written = api.file_of(escape="\\", export_fields=_fields("id", "title"))

    assert written == b'id,title\nA-1,"Mug, \\"Blue\\""\nA-2,Plate\twith tab\nA-3,Bowl\n'


def test_no_enclosure_escapes_the_delimiter(api: PlatformApi) -> None:
    written = api.file_of(enclosure="", escape="\\", export_fields=_fields("id", "title"))

    assert written == b'id,title\nA-1,Mug\\, "Blue"\nA-2,Plate\twith tab\nA-3,Bowl\n'


def test_strip_characters_removes_each_named_character_from_values(api: PlatformApi) -> None:
    written = api.file_of(
        strip_characters={"char1": "\\t", "char2": '"'}, export_fields=_fields("id", "title")
    )

    assert written == b'id,title\nA-1,"Mug, Blue"\nA-2,Platewith tab\nA-3,Bowl\n'


def test_file_header_and_footer_frame_the_rows(api: PlatformApi) -> None:
    written = api.file_of(
        file_header="# catalog", file_footer="# end\n", export_fields=_fields("id")
    )

    assert written == b"# catalog\nid\nA-1\nA-2\nA-3\n# end\n"


def test_export_field_names_and_an_empty_source_column(api: PlatformApi) -> None:
    written = api.file_of(export_fields=_fields("id>sku", ">note", "price"))

    assert written == b"sku,note,price\nA-1,,12.50\nA-2,,4.00\nA-3,,7.25\n"


def test_without_column_names(api: PlatformApi) -> None:
    written = api.file_of(include_column_names="0", export_fields=_fields("id>sku", "price"))

    assert written == b"A-1,12.50\nA-2,4.00\nA-3,7.25\n"


def test_row_sort_compares_numbers_as_numbers(api: PlatformApi) -> None:
    written = api.file_of(row_sort="price", export_fields=_fields("id", "price"))

    # As text "12.50" would come first.
    assert written == b"id,price\nA-2,4.00\nA-3,7.25\nA-1,12.50\n"


def test_row_sort_descending_with_a_row_limit(api: PlatformApi) -> None:
    written = api.file_of(
        row_sort="price", row_order="DESC", row_limit=2, export_fields=_fields("id", "price")
    )

    assert written == b"id,price\nA-1,12.50\nA-3,7.25\n"


def test_row_sort_by_text(api: PlatformApi) -> None:
    written = api.file_of(row_sort="title", export_fields=_fields("id"))

    assert written == b"id\nA-3\nA-1\nA-2\n"


def test_deduplicate_keeps_the_first_row_of_each_value(api: PlatformApi) -> None:
    written = api.file_of(deduplicate_field_name=["brand"], export_fields=_fields("id", "brand"))

    assert written == b"id,brand\nA-1,Acme\nA-2,\n"


def test_export_selector_picks_rows(api: PlatformApi) -> None:
    written = api.file_of(
        export_selector="quantity > 0 AND brand = Acme", export_fields=_fields("id")
    )

    assert written == b"id\nA-1\nA-3\n"


def test_json_pretty(api: PlatformApi) -> None:
    written = api.file_of(export_format="json", export_fields=_fields("id>sku", "price"))

    assert written == (
        b"[\n"
        b'  {\n    "sku": "A-1",\n    "price": "12.50"\n  },\n'
        b'  {\n    "sku": "A-2",\n    "price": "4.00"\n  },\n'
        b'  {\n    "sku": "A-3",\n    "price": "7.25"\n  }\n'
        b"]\n"
    )


def test_json_minify(api: PlatformApi) -> None:
    written = api.file_of(
        export_format="json", json_minify_type="minify", export_fields=_fields("id>sku", "price")
    )

    assert written == (
        b'[{"sku":"A-1","price":"12.50"},{"sku":"A-2","price":"4.00"},{"sku":"A-3","price":"7.25"}]'
    )


def test_json_without_column_names_writes_arrays(api: PlatformApi) -> None:
    written = api.file_of(
        export_format="json",
        json_minify_type="minify",
        include_column_names="0",
        export_fields=_fields("id", "price"),
    )

    assert written == b'[["A-1","12.50"],["A-2","4.00"],["A-3","7.25"]]'
    assert json.loads(written)[0] == ["A-1", "12.50"]


def test_xml_default_leaves_empty_tags_out(api: PlatformApi) -> None:
    written = api.file_of(export_format="xml", export_fields=_fields("id>sku", "brand"))

    assert written == (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b"<products>\n"
        b"  <product>\n    <sku>A-1</sku>\n    <brand>Acme</brand>\n  </product>\n"
        b"  <product>\n    <sku>A-2</sku>\n  </product>\n"
        b"  <product>\n    <sku>A-3</sku>\n    <brand>Acme</brand>\n  </product>\n"
        b"</products>\n"
    )


def test_xml_show_empty_tags_and_no_document_tag(api: PlatformApi) -> None:
    written = api.file_of(
        export_format="xml",
        show_empty_tags="1",
        xml_write_document_tag="0",
        row_limit=2,
        row_sort="brand",
        export_fields=_fields("id>sku", "brand"),
    )

    assert written == (
        b"<products>\n"
        b"  <product>\n    <sku>A-2</sku>\n    <brand/>\n  </product>\n"
        b"  <product>\n    <sku>A-1</sku>\n    <brand>Acme</brand>\n  </product>\n"
        b"</products>\n"
    )


def test_xml_use_cdata(api: PlatformApi) -> None:
    written = api.file_of(
        export_format="xml",
        use_cdata="1",
        xml_write_document_tag="0",
        row_limit=1,
        export_fields=_fields("title"),
    )

    assert written == (
        b"<products>\n"
        b'  <product>\n    <title><![CDATA[Mug, "Blue"]]></title>\n  </product>\n'
        b"</products>\n"
    )


@pytest.mark.parametrize("show_parents", ["0", "1"])
def test_xml_nested_tags_escaping_and_empty_parents(
    sandbox: SandboxProcess, show_parents: str
) -> None:
    api = platform_for(
        sandbox,
        fields=["id", "brand", "gtin"],
        rows=[
            {"id": "X-1", "brand": "", "gtin": ""},
            {"id": "X-2", "brand": "B&<C>", "gtin": "123"},
        ],
    )

    written = api.file_of(
        export_format="xml",
        xml_write_document_tag="0",
        show_empty_parent_tags=show_parents,
        export_fields=_fields("id>sku", "brand>maker/name", "gtin>maker/gtin"),
    )

    empty_parent = b"    <maker/>\n" if show_parents == "1" else b""
    assert written == (
        b"<products>\n"
        b"  <product>\n    <sku>X-1</sku>\n" + empty_parent + b"  </product>\n"
        b"  <product>\n    <sku>X-2</sku>\n    <maker>\n"
        b"      <name>B&amp;&lt;C&gt;</name>\n      <gtin>123</gtin>\n"
        b"    </maker>\n  </product>\n"
        b"</products>\n"
    )


CSV_ID_PRICE = b"id,price\nA-1,12.50\nA-2,4.00\nA-3,7.25\n"


def test_gzip_compression(api: PlatformApi) -> None:
    written = api.file_of(
        file_name="feed.csv.gz", compression="gzip", export_fields=_fields("id", "price")
    )

    assert gzip.decompress(written) == CSV_ID_PRICE
    # mtime 0: the same rows and settings always give the same bytes.
    assert written == gzip.compress(CSV_ID_PRICE, mtime=0)


def test_zip_compression_with_the_inner_file_name(api: PlatformApi) -> None:
    written = api.file_of(
        file_name="feed.zip",
        compression="zip",
        zip_inner_file_name="catalog.csv",
        export_fields=_fields("id", "price"),
    )

    with zipfile.ZipFile(io.BytesIO(written)) as archive:
        assert archive.namelist() == ["catalog.csv"]
        assert archive.read("catalog.csv") == CSV_ID_PRICE
        assert archive.getinfo("catalog.csv").date_time == (1980, 1, 1, 0, 0, 0)


def test_export_encoding(sandbox: SandboxProcess) -> None:
    api = platform_for(sandbox, fields=["id", "title"], rows=[{"id": "C-1", "title": "Café"}])

    latin = api.file_of(export_encoding="ISO-8859-1", include_column_names="0")
    utf8 = api.file_of(include_column_names="0")

    assert latin == b"C-1,Caf\xe9\n"
    assert utf8 == "C-1,Café\n".encode()


def test_a_run_below_the_threshold_fails_and_says_why(
    api: PlatformApi, sandbox: SandboxProcess
) -> None:
    export = api.add_export(threshold="5")

    run = sandbox.export_run(export["id"])

    assert run["status"] == "failed"
    assert run["error_flag"] is True
    last_log = api.call("GET", f"/dbs/{api.db_id}/exports/{export['id']}").json()["last_log"]
    assert last_log["error_flag"] == "1"
    assert "threshold" in last_log["message"]
