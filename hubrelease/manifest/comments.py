"""Keep the comment that follows a YAML list in place when the list's last item changes (and cut one).

ruamel.yaml stores a comment written *between* two top-level keys (``init`` writes one above each
section) on the deepest last scalar of the preceding list. Appending an item would leave that
comment above the new item, and removing the last item would delete it. ``trailing_comment_kept``
detaches the comment before such an edit and re-attaches it to whatever is last afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, TypeGuard

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.tokens import CommentToken

# Where ruamel keeps the comment after a value: index 2 of a map key's slot, 0 of a list item's.
_MAP_AFTER, _SEQ_AFTER = 2, 0


def _end_slot(node: Any) -> tuple[list[Any] | None, Any, int, Any] | None:
    """(comment slot, key, index, owner) of the deepest last value of ``node``; None if empty."""
    if isinstance(node, CommentedMap) and node:
        key = list(node.keys())[-1]
        index = _MAP_AFTER
    elif isinstance(node, CommentedSeq) and node:
        key = len(node) - 1
        index = _SEQ_AFTER
    else:
        return None
    inner = _end_slot(node[key])
    if inner is not None:
        return inner
    return node.ca.items.get(key), key, index, node


@contextlib.contextmanager
def trailing_comment_kept(parent: CommentedMap, key: str) -> Iterator[None]:
    """Move the comment lines that follow ``parent[key]`` to its new end after the ``with`` block."""
    tail = _detach(parent, key)
    yield
    if tail:
        _attach(parent, key, tail)


def _detach(parent: CommentedMap, key: str) -> str:
    return _detach_end(parent.get(key))


def _detach_end(node: Any) -> str:
    """Cut the comment lines that follow ``node`` (its end-of-line comment stays); return them."""
    end = _end_slot(node)
    if end is None:
        return ""
    slot, _, index, _ = end
    if slot is None or len(slot) <= index:
        return ""
    token = slot[index]
    if not isinstance(token, CommentToken):
        return ""
    value = str(token.value)
    cut = value.find("\n") + 1
    if cut == 0 or not value[cut:]:
        return ""
    # The first line is the end-of-line comment of that last value (or empty): it stays put.
    if value[:cut].strip():
        token.value = value[:cut]
    else:
        slot[index] = None
    return value[cut:]


def _attach(parent: CommentedMap, key: str, tail: str) -> None:
    end = _end_slot(parent.get(key))
    if end is None:
        _attach_before_next(parent, key, tail)
        return
    _, item_key, index, owner = end
    slot = owner.ca.items.setdefault(item_key, [None, None, None, None])
    while len(slot) <= index:
        slot.append(None)
    token = slot[index]
    if isinstance(token, CommentToken):
        token.value = str(token.value) + tail
    else:
        slot[index] = CommentToken("\n" + tail, CommentMark(0), None)


def _attach_before_next(parent: CommentedMap, key: str, tail: str) -> None:
    """The list is now empty (``[]``): the comment goes above the key that follows it, if any."""
    keys = list(parent.keys())
    following = keys[keys.index(key) + 1 :]
    if not following:
        return
    set_comment_above(parent, following[0], tail, indent=0)


def set_comment_above(node: CommentedMap, key: Any, text: str, indent: int) -> None:
    """Put comment lines as ruamel stores them (``# ...`` separated by newlines) above ``key``."""
    lines = [line.strip().removeprefix("#").removeprefix(" ") for line in text.rstrip("\n").split("\n")]
    node.yaml_set_comment_before_after_key(key, before="\n".join(lines), indent=indent)


def pop_comment_above(parent: CommentedMap, key: str, index: int) -> str:
    """Remove the comment lines directly above item ``index`` of the list ``parent[key]``; return them.

    ruamel keeps them after the previous item (its deepest last value), or, above the first item,
    on ``key`` (slot 3) and again on the list itself.
    """
    items = parent[key]
    if index > 0:
        return _detach_end(items[index - 1])
    slot = parent.ca.items.get(key)
    text = ""
    if slot is not None and len(slot) > 3 and slot[3]:
        text = "".join(str(token.value) for token in slot[3] if isinstance(token, CommentToken))
        slot[3] = None
    if isinstance(items, CommentedSeq) and items.ca.comment and len(items.ca.comment) > 1:
        items.ca.comment[1] = None
    return text


# ruamel keeps the comment lines written below a key on that key (slot 2 of its comment entry),
# so adding, re-commenting or deleting keys would move those lines or drop them with the key.


@contextlib.contextmanager
def end_comment_kept(node: CommentedMap) -> Iterator[None]:
    """Comment lines below ``node`` stay below it while keys are added to or removed from its end."""
    with trailing_comment_kept(CommentedMap(node=node), "node"):
        yield


def add_note(node: CommentedMap, key: str, note: str) -> None:
    """Append ``note`` to ``key``'s end-of-line comment, keeping the user's text and the lines below."""
    if node.fa.flow_style():  # a comment inside `{...}` would break the mapping over two lines
        return
    slot = node.ca.items.get(key)
    token = slot[2] if slot and len(slot) > 2 else None
    first, _, below = str(token.value).partition("\n") if isinstance(token, CommentToken) else ("", "", "")
    own = first.strip().removeprefix("#").strip()
    node.yaml_add_eol_comment(f"{own}; {note}" if own else note, key)
    added = node.ca.items[key][2]  # ended by a newline, as parsed comments are, so lines can follow it
    added.value = str(added.value).rstrip("\n") + "\n" + below


def delete_key(node: CommentedMap, key: str) -> None:
    """Delete ``key``; the comment lines below it stay above the key that followed it."""
    keys = list(node)
    slot = node.ca.items.get(key)
    token = slot[2] if slot and len(slot) > 2 else None
    del node[key]
    below = str(token.value).partition("\n")[2] if isinstance(token, CommentToken) else ""
    following = keys[keys.index(key) + 1 :]
    if below.strip() and following:
        set_comment_above(node, following[0], below, indent=node.lc.col)


YamlMap = CommentedMap
"""A mapping of the manifest editor's round-trip tree: rooms above manifest/ name it without ruamel."""


def yaml_map() -> YamlMap:
    """A new, empty mapping for the round-trip tree."""
    return CommentedMap()


def is_yaml_map(value: object) -> TypeGuard[CommentedMap]:
    """A mapping of the manifest editor's round-trip tree, which comments can be attached to."""
    return isinstance(value, CommentedMap)
