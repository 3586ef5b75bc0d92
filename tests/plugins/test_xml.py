"""Drill's xml format, shipped as an entry-point plugin on the reader framework and queried
through SQL: rows at dataLevel, nested elements as maps, repeated elements, attributes in the
`attributes` map, all values text, SELECT *, projection, COUNT(*), implicit columns, a table
function, XML that is not well-formed."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

import auger
from auger.config import FormatConfig
from auger.formats import get_format, known_formats
from auger.plugins.xml import XmlOptions
from auger.scan import ScanOperator
from tests.plugins.helpers import connect_with_formats, rows

# Drill's documented example of attributes
BOOKS = """\
<?xml version="1.0"?>
<books>
   <book>
     <author>Mark Twain</author>
     <title>The Adventures of Tom Sawyer</title>
     <category>FICTION</category>
     <year>1876</year>
   </book>
   <!-- a comment between rows -->
   <book>
     <authors>
         <author>Niklaus Wirth</author>
         <author>Somebody else</author>
     </authors>
     <title binding="paperback">The Programming Language Pascal</title>
     <category >PASCAL</category>
     <year>1971</year>
   </book>
   <book id="3">
     <author>O.-J. Dahl</author>
     <title binding="hardcover" subcategory="non-fiction">Structured Programming</title>
     <category>PROGRAMMING</category>
     <year>1972</year>
     <publisher><address><city zip="1000">Amsterdam</city></address><name>ACM</name></publisher>
     <note/>
   </book>
 </books>
"""

NESTED = """\
<catalog xmlns:x="urn:x">
  <shelf name="a">
    <x:item><sku>1</sku><price>9.50</price></x:item>
    <x:item><sku>2</sku><price>12</price></x:item>
  </shelf>
  <shelf name="b">
    <x:item><sku>3</sku><price>1</price></x:item>
  </shelf>
</catalog>
"""

BROKEN = """\
<books>
  <book><title>fine</title></book>
  <book><title>unclosed</book>
</books>
"""


def test_registered_by_entry_point_like_a_third_party() -> None:
    names = {ep.name: ep.value for ep in entry_points(group="auger.formats")}
    assert names["xml"] == "auger.plugins.xml:XmlFormat"
    assert "xml" in known_formats()
    assert type(get_format("xml")).__name__ == "XmlFormat"


def test_options_under_drill_names_and_snake_case() -> None:
    for options in ({"dataLevel": 2}, {"data_level": "2"}):
        assert XmlOptions.from_config(FormatConfig("x", "xml", ("xml",), options)) == XmlOptions(2)
    assert XmlOptions.from_config(FormatConfig("x", "xml", ("xml",))) == XmlOptions(1)
    assert XmlOptions.from_config(FormatConfig("x", "xml", ("xml",), {"dataLevel": 0})) == (
        XmlOptions(1)
    )
    with pytest.raises(auger.UserError, match="dataLevel must be a whole number"):
        XmlOptions.from_config(FormatConfig("x", "xml", ("xml",), {"dataLevel": "deep"}))
    # Drill's allTextMode: true (its default) is what auger does; false is refused, not ignored
    assert XmlOptions.from_config(
        FormatConfig("x", "xml", ("xml",), {"allTextMode": True})
    ) == XmlOptions(1)
    with pytest.raises(auger.UserError, match="allTextMode = false"):
        XmlOptions.from_config(FormatConfig("x", "xml", ("xml",), {"all_text_mode": "false"}))


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("xml")
    (root / "library" / "2020").mkdir(parents=True)
    (root / "library" / "2020" / "books.xml").write_text(BOOKS)
    (root / "catalog.xml").write_text(NESTED)
    (root / "broken.xml").write_text(BROKEN)
    return root


@pytest.fixture(scope="module")
def conn(spark: Any, data: Path) -> Iterator[Any]:
    # Drill's configuration block, as pasted
    formats = {"xml": {"type": "xml", "extensions": ["xml"], "dataLevel": 2}}
    with connect_with_formats("docs", data, formats) as c:
        yield c


@pytest.mark.spark
def test_select_star_rows_maps_repeats_and_attributes(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("SELECT * FROM dfs.docs.`library/2020/books.xml`")
    names = [d[0] for d in cur.description]
    assert names == ["attributes", "author", "title", "category", "year", "authors", "publisher"]
    got = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    assert [r["title"] for r in got] == [
        "The Adventures of Tom Sawyer",
        "The Programming Language Pascal",
        "Structured Programming",
    ]
    assert [r["author"] for r in got] == ["Mark Twain", None, "O.-J. Dahl"]
    # a repeated element: its texts joined, as Drill's reader writes them
    assert got[1]["authors"]["author"] == "Niklaus WirthSomebody else"
    assert got[0]["authors"]["author"] is None
    assert got[2]["publisher"]["address"]["city"] == "Amsterdam"
    assert got[2]["publisher"]["name"] == "ACM"
    assert got[0]["year"] == "1876"  # every value is text
    attrs = [r["attributes"] for r in got]
    assert attrs[0] == {k: None for k in attrs[0]}
    assert attrs[1]["title_binding"] == "paperback"
    assert attrs[2]["title_binding"] == "hardcover"
    assert attrs[2]["title_subcategory"] == "non-fiction"
    assert attrs[2]["book_id"] == "3"
    assert attrs[2]["publisher_address_city_zip"] == "1000"


@pytest.mark.spark
def test_projection_count_and_implicit_columns(conn: Any) -> None:
    assert rows(conn, "SELECT COUNT(*) FROM dfs.docs.`library`") == [(3,)]
    got = rows(
        conn,
        "SELECT t.publisher.address.city, t.attributes.title_binding, filename, dir0 "
        "FROM dfs.docs.`library` t ORDER BY t.year",
    )
    assert got == [
        (None, None, "books.xml", "2020"),
        (None, "paperback", "books.xml", "2020"),
        ("Amsterdam", "hardcover", "books.xml", "2020"),
    ]
    assert rows(
        conn, "SELECT CAST(`year` AS INT) + 1 FROM dfs.docs.`library` WHERE category = 'PASCAL'"
    ) == [(1972,)]


@pytest.mark.spark
def test_table_function_data_level(conn: Any) -> None:
    # rows three levels down, with namespace prefixes dropped from the names
    got = rows(
        conn,
        "SELECT sku, price FROM table(dfs.docs.`catalog.xml`(type => 'xml', dataLevel => 3)) "
        "ORDER BY sku",
    )
    assert got == [("1", "9.50"), ("2", "12"), ("3", "1")]
    # one level up, each shelf is a row and its repeated items merge into one map
    got = rows(
        conn,
        "SELECT t.attributes.shelf_name, t.item.sku FROM table(dfs.docs.`catalog.xml`("
        "type => 'xml', data_level => 2)) t ORDER BY 1",
    )
    assert got == [("a", "12"), ("b", "3")]


@pytest.mark.spark
def test_xml_that_is_not_well_formed_names_file_line_and_column(conn: Any) -> None:
    with pytest.raises(auger.DatabaseError) as info:
        rows(conn, "SELECT title FROM dfs.docs.`broken.xml`")
    text = str(info.value)
    assert text.startswith("DATA_READ ERROR: The XML file is not well-formed: mismatched tag")
    assert "broken.xml" in text and "Line: 3" in text and "Column: 26" in text
    assert "SYSTEM" not in text


@pytest.mark.spark
def test_small_batches_keep_every_row(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `auger.scan.batch_rows` = 1")
    try:
        assert rows(conn, "SELECT COUNT(title) FROM dfs.docs.`library`") == [(3,)]
    finally:
        cur.execute("ALTER SESSION RESET `auger.scan.batch_rows`")


def test_a_compressed_file_and_projection_without_spark(tmp_path: Path) -> None:
    path = tmp_path / "books.xml.gz"
    path.write_bytes(gzip.compress(BOOKS.encode()))
    plugin = get_format("xml")
    config = FormatConfig("xml", "xml", ("xml",), {"dataLevel": 2})
    op = ScanOperator(lambda split: plugin.reader(split, config), [str(path)], ["title", "year"])
    got = [r for b in op for r in b.to_pylist()]
    assert [(r["title"], r["year"]) for r in got] == [
        ("The Adventures of Tom Sawyer", "1876"),
        ("The Programming Language Pascal", "1971"),
        ("Structured Programming", "1972"),
    ]


def _scan(path: Path, columns: list[str], level: int = 2) -> list[dict[str, Any]]:
    plugin = get_format("xml")
    config = FormatConfig("xml", "xml", ("xml",), {"dataLevel": level})
    op = ScanOperator(lambda split: plugin.reader(split, config), [str(path)], columns)
    return [r for b in op for r in b.to_pylist()]


def test_an_empty_file_has_no_rows(tmp_path: Path) -> None:
    (tmp_path / "empty.xml").write_text("  \n")
    assert _scan(tmp_path / "empty.xml", ["*"]) == []


def test_an_element_that_is_text_then_elements_is_a_data_read_error(tmp_path: Path) -> None:
    path = tmp_path / "shapes.xml"
    path.write_text("<r><row><a>1</a></row><row><a><b>2</b></a></row></r>")
    with pytest.raises(auger.UserError) as info:
        _scan(path, ["*"])
    assert info.value.kind.name == "DATA_READ"
    assert "XML element <a> (column a) holds elements here but text in an earlier row" in str(
        info.value
    )
    assert "Row: 2" in str(info.value)
    # projecting only what is consistent reads the file
    assert _scan(path, ["attributes"]) == [{"attributes": {}}, {"attributes": {}}]
