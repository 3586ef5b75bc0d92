"""Reading a plugin format's options under Drill's camelCase names or their snake_case forms.

A Drill format block pasted into auger's configuration keeps Drill's spelling (``maxErrors``);
auger's own style, and every table function option (which arrives snake_cased), is
``max_errors``. Both reach the plugin in ``FormatConfig.options``; these helpers read either
(through :meth:`auger.config.FormatConfig.option`) and check the value's type.
"""

from __future__ import annotations

from typing import Any

from auger.config import FormatConfig, snake_case
from auger.errors import UserError

__all__ = ["bool_option", "char_option", "int_option", "option", "snake_case"]


def option(config: FormatConfig, name: str, default: Any = None) -> Any:
    """The option ``name`` (Drill's camelCase) under either spelling, else ``default``; the
    snake_case form wins when both are set (see :func:`auger.config.format_option`)."""
    return config.option(name, default)


def int_option(config: FormatConfig, name: str, default: int) -> int:
    """An integer option; anything else is a validation error naming the format and option."""
    value = option(config, name, default)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise UserError.validation(
            f"Format [{config.name}]: option {name} must be a whole number, not [{value}]",
            [f"Fix: set {name} = {default}"],
        ) from None


def bool_option(config: FormatConfig, name: str, default: bool) -> bool:
    """A boolean option, given as a boolean or as the text ``true``/``false``."""
    value = option(config, name, default)
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise UserError.validation(
        f"Format [{config.name}]: option {name} must be true or false, not [{value}]",
        [f"Fix: set {name} = {str(default).lower()}"],
    )


def char_option(config: FormatConfig, name: str, default: str) -> str:
    """A one-character option; unset or empty means ``default``."""
    value = option(config, name, None)
    if value is None or value == "":
        return default
    text = str(value)
    if len(text) != 1:
        raise UserError.validation(
            f"Format [{config.name}]: option {name} must be a single character, not [{text}]",
            [f"Fix: set {name} to one character, such as {default!r}"],
        )
    return text
