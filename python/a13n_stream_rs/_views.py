"""``DisplayFold.items`` and ``DisplayFold.changed``: live views of the fold's items and live changes.

The reference keeps a dict of items and a set of changed ids on the fold; here both live in Rust, and these views
read them when asked: an ``Item`` model is built for the item looked up, and ``changed`` edits the fold's own
change tracking (``clear()`` after publishing, as a host does with the reference's set).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableSet
from typing import Any, TypeVar

from ._models import Item

_T = TypeVar("_T")


class Items(Mapping[str, Item]):
    """The fold's items by id, in order of creation; each value an ``Item`` model (a detached copy)."""

    __slots__ = ("_fold",)

    def __init__(self, fold: Any) -> None:
        self._fold = fold

    def __getitem__(self, key: str) -> Item:
        item = self._fold._item(key) if isinstance(key, str) else None
        if item is None:
            raise KeyError(key)
        return item  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fold._item_ids())

    def __len__(self) -> int:
        return int(self._fold.item_count)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._fold._item(key) is not None

    def __repr__(self) -> str:
        return f"<items of {self._fold!r}>"


class Changed(MutableSet[str]):
    """The ids of items changed since the host last cleared them, in order of creation."""

    __slots__ = ("_fold",)

    def __init__(self, fold: Any) -> None:
        self._fold = fold

    @classmethod
    def _from_iterable(cls, values: Iterable[_T]) -> set[_T]:
        # What `changed - other`, `changed | other` and the like make: a plain set, as the reference's would be.
        return set(values)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._fold._changed_ids()

    def __iter__(self) -> Iterator[str]:
        return iter(self._fold._changed_ids())

    def __len__(self) -> int:
        return len(self._fold._changed_ids())

    def add(self, value: str) -> None:
        """Mark an item changed (an id the fold does not hold raises ``KeyError``)."""
        if not self._fold._set_changed(value, True):
            raise KeyError(value)

    def discard(self, value: str) -> None:
        self._fold._set_changed(value, False)

    def clear(self) -> None:
        self._fold._clear_changed()

    def __repr__(self) -> str:
        return repr(set(self))
