"""A package's lazily imported names: imported on first use, never at the package's import."""

from __future__ import annotations

import sys

import pytest
from heta_framework.common.lazy import lazy_attributes


def test_a_lazy_name_is_imported_when_first_asked_for_and_not_before():
    sys.modules.pop("colorsys", None)
    getter = lazy_attributes("my_plugin", {"rgb_to_hsv": "colorsys"})
    assert "colorsys" not in sys.modules
    rgb_to_hsv = getter("rgb_to_hsv")
    import colorsys

    assert rgb_to_hsv is colorsys.rgb_to_hsv
    assert rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)


def test_any_other_name_is_an_attribute_error_naming_the_package():
    getter = lazy_attributes("my_plugin", {"rgb_to_hsv": "colorsys"})
    with pytest.raises(AttributeError, match="module 'my_plugin' has no attribute 'hsv_to_rgb'"):
        getter("hsv_to_rgb")
