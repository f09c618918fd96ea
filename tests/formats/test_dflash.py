"""Drafter config parsing: malformed values are refused naming the field, never an internal error."""

from __future__ import annotations

import math
from typing import Any

import pytest

from hubrelease.errors import InputError
from hubrelease.formats.dflash import parse_config, rope_theta_lookup
from tests.factories.drafters import drafter_config


def test_a_bool_is_not_a_rope_theta() -> None:
    # isinstance(True, int) holds, so `rope_theta: true` used to read as a rope base of 1.0.
    config = {"rope_parameters": {"rope_theta": True}, "rope_theta": 1e6}
    assert rope_theta_lookup(config) == (1e6, "rope_theta")


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"architectures": 5}, "architectures", "architectures must be a list of strings"),
        ({"layer_types": 5}, "layer_types", "layer_types must be a list of strings"),
        ({"rope_parameters": {"rope_theta": math.nan}}, "rope_parameters.rope_theta", "must be a positive"),
        ({"rope_parameters": {"rope_theta": -5}}, "rope_parameters.rope_theta", "must be a positive"),
        ({"rope_parameters": {"rope_theta": math.inf}}, "rope_parameters.rope_theta", "must be a positive"),
    ],
)
def test_malformed_values_name_the_field(change: dict[str, Any], field: str, message: str) -> None:
    config = drafter_config() | change
    with pytest.raises(InputError, match=message) as caught:
        parse_config(config)
    assert caught.value.field == field
