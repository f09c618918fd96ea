"""The one translator of pydantic errors: our field paths and words, for manifests, evaluations and specs."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from hubrelease.errors import InputError
from hubrelease.validation import LocatedError, every_line, first_error, format_loc, problems


class Arm(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    kind: Literal["a", "b"] = "a"
    weight: int | list[int] = 0

    @model_validator(mode="after")
    def _named(self) -> Arm:
        if self.name == "bad":
            raise LocatedError("a name that says nothing", ("name",))
        return self


class Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    arms: list[Arm]


def _error(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        Doc.model_validate(data)
    return info.value


def test_locations_read_as_the_file_is_written() -> None:
    assert format_loc(("arms", 2, "name")) == "arms[2].name"
    assert format_loc(()) == "(top level)"


def test_each_kind_of_error_in_our_words_union_members_folded() -> None:
    exc = _error({"arms": [{"name": "x", "kind": "c", "weight": "w", "extra": 1}, {}, {"name": "bad"}]})
    found = [(p.field, p.message) for p in problems(exc, "hubrelease schema")]
    assert found == [
        ("arms[0].kind", "Input should be 'a' or 'b', got 'c'"),
        ("arms[0].weight", "Input should be a valid integer, unable to parse string as an integer"),
        ("arms[0].extra", "unknown key (allowed keys are listed by `hubrelease schema`)"),
        ("arms[1].name", "required field is missing"),
        ("arms[2].name", "a name that says nothing"),  # the validator's own field, not arms[2]
    ]


def test_first_error_counts_the_rest_and_every_line_lists_them_located() -> None:
    exc = _error({"arms": [{}, {"name": "bad"}]})
    lines = {(0,): 3, ("arms", 0, "name"): 4, ("arms", 1, "name"): 7}
    error = first_error(exc, InputError, "f.yaml", "s", lambda loc: lines.get(loc))
    assert str(error) == "f.yaml:4: arms[0].name: required field is missing (and 1 more error)"
    assert every_line(exc, "f.yaml", "s", lambda loc: lines.get(loc)) == [
        "f.yaml:4: arms[0].name: required field is missing",
        "f.yaml:7: arms[1].name: a name that says nothing",
    ]
