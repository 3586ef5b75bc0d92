import pyarrow as pa
import pytest

from auger.errors import UserError
from auger.types import ColumnMetadata, DataMode, MinorType
from auger.types.arrow import schema_to_arrow
from auger.types.schema_text import parse_schema


def test_parse_design_example() -> None:
    s = parse_schema("a INT NOT NULL, b VARCHAR, c INT ARRAY, m STRUCT<x BIGINT>")
    assert s.names() == ["a", "b", "c", "m"]
    assert s["a"] == ColumnMetadata("a", MinorType.INT, DataMode.REQUIRED)
    assert s["b"].mode is DataMode.OPTIONAL
    assert s["c"].mode is DataMode.REPEATED and s["c"].type is MinorType.INT
    assert s["m"].is_map and s["m"].member("X") is not None
    assert s["m"].member("x").type is MinorType.BIGINT  # type: ignore[union-attr]


def test_lookup_is_case_insensitive_and_keeps_first_spelling() -> None:
    s = parse_schema("MyCol VARCHAR")
    assert s.column("mycol") is s.column("MYCOL")
    assert s.names() == ["MyCol"]
    with pytest.raises(ValueError):
        s.add(ColumnMetadata("MYCOL", MinorType.INT))


@pytest.mark.parametrize(
    "text",
    [
        "a INT NOT NULL, b VARCHAR(10), c ARRAY<BIGINT>",
        "d ARRAY<ARRAY<DOUBLE>>, kv MAP<VARCHAR, INT>",
        "m STRUCT<x BIGINT, n STRUCT<y VARCHAR>>, rm ARRAY<STRUCT<z INT>>",
        "dt DATE FORMAT 'yyyy-MM-dd' DEFAULT '2020-01-01', `odd name` DECIMAL(10, 2)",
        "p VARCHAR PROPERTIES {'drill.strict' = 'true', 'k''q' = 'v'}",
    ],
)
def test_text_round_trips(text: str) -> None:
    s = parse_schema(text)
    assert parse_schema(s.to_text()) == s


def test_properties_and_defaults() -> None:
    s = parse_schema("dt DATE NOT NULL FORMAT 'yyyy' DEFAULT '2001'")
    col = s["dt"]
    assert col.format == "yyyy" and col.default_value == "2001"
    assert col.mode is DataMode.REQUIRED


def test_parse_errors_name_the_position() -> None:
    with pytest.raises(UserError) as info:
        parse_schema("a INT, b NOSUCHTYPE")
    assert "PARSE ERROR" in str(info.value)
    assert "NOSUCHTYPE" in str(info.value)


def test_arrow_mapping_follows_modes() -> None:
    s = parse_schema("a INT NOT NULL, b VARCHAR, c BIGINT ARRAY, m STRUCT<x DOUBLE>")
    arrow = schema_to_arrow(s)
    assert arrow.field("a").type == pa.int32() and not arrow.field("a").nullable
    assert arrow.field("b").type == pa.string() and arrow.field("b").nullable
    assert pa.types.is_list(arrow.field("c").type)
    assert arrow.field("m").type == pa.struct([pa.field("x", pa.float64())])


def test_arrow_round_trip_of_nested_schema() -> None:
    from auger.types.arrow import schema_from_arrow

    s = parse_schema("a BIGINT, l ARRAY<ARRAY<INT>>, m STRUCT<x VARCHAR>, d DECIMAL(9, 3)")
    back = schema_from_arrow(schema_to_arrow(s))
    assert [c.type for c in back] == [c.type for c in s]
    assert back["d"].precision == 9 and back["d"].scale == 3
