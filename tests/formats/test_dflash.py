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


def test_head_dims_default_as_sglang_does() -> None:
    config = {k: v for k, v in drafter_config().items() if k not in ("head_dim", "num_key_value_heads")}
    parsed = parse_config(config)
    assert (parsed.num_heads, parsed.num_kv_heads, parsed.head_dim) == (4, 4, 16)
    assert parse_config(drafter_config() | {"intermediate_size": 0}).intermediate_size is None


def test_use_swa_makes_every_layer_sliding_as_mainlines_converter() -> None:
    assert parse_config(drafter_config()).sliding == (True, False)
    config = drafter_config() | {"use_sliding_window": False}
    config["dflash_config"] = config["dflash_config"] | {"use_swa": True}
    assert parse_config(config).sliding == (True, True)
    # dflash_config.swa_window_size wins, as in mainline's converter.
    config["dflash_config"] |= {"swa_window_size": 128}
    assert parse_config(config).sliding_window == 128
    assert parse_config(drafter_config(swa=False)).sliding is None


@pytest.mark.parametrize(
    ("top", "nested", "expected"),
    [(None, None, None), (False, True, False), (None, True, True), ("no", None, None)],
)
def test_causal_is_is_causal_then_dflash_config_causal(
    top: object, nested: object, expected: bool | None
) -> None:
    config = {k: v for k, v in drafter_config().items() if k != "is_causal"}
    if top is not None:
        config["is_causal"] = top
    if nested is not None:
        config["dflash_config"] = config["dflash_config"] | {"causal": nested}
    assert parse_config(config).causal is expected


def test_rope_theta_beyond_float_range_is_an_input_error() -> None:
    with pytest.raises(
        InputError, match=r"must be a positive finite number, got 100000000000\.\.\. \(401 characters\)"
    ):
        parse_config(drafter_config() | {"rope_parameters": {"rope_theta": 10**400}})
