import pickle

from auger.errors import ErrorKind, UserError


def test_user_error_renders_drill_form_with_context() -> None:
    err = UserError.data_read("Unbalanced quote", ["File: /d/a.csv", "Line: 12"])
    assert str(err) == "DATA_READ ERROR: Unbalanced quote\n\nFile: /d/a.csv\nLine: 12"
    assert err.summary == "DATA_READ ERROR: Unbalanced quote"


def test_add_context_strips_trailing_colon_from_name() -> None:
    err = UserError.validation("bad").add_context("Column:", "a")
    assert err.context == ["Column: a"]
    assert str(err).endswith("Column: a")


def test_user_error_survives_pickling_with_kind_and_context() -> None:
    err = UserError(ErrorKind.RESOURCE, "too big", ["Limit: 16 MB"])
    back = pickle.loads(pickle.dumps(err))
    assert isinstance(back, UserError)
    assert back.kind is ErrorKind.RESOURCE
    assert back.context == ["Limit: 16 MB"]
    assert str(back) == str(err)


def test_closest_name_is_the_one_did_you_mean_rule() -> None:
    from auger.errors import closest_name

    assert closest_name("regoin", ["id", "region"]) == "region"
    assert closest_name("uppr", ["UPPER", "LOWER"]) == "UPPER"
    assert closest_name("REGION", ["region"]) is None  # known already: nothing to suggest
    assert closest_name("zzz", ["region"]) is None
