"""``DisplayFold.items`` and ``DisplayFold.changed``: live views of the fold's items and live changes.

The reference keeps a dict of items and a set of changed ids on the fold; here both live in Rust, and these views
read them when asked: an ``Item`` model is built for the item looked up, deleting one retires it (paging), and
``changed`` edits the fold's own change tracking (``clear()`` after publishing, as a host does with the reference's set).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableMapping, MutableSet
from typing import Any, TypeVar

from ._models import Item

_T = TypeVar("_T")


class Items(MutableMapping[str, Item]):
    """The fold's items by id, in order of creation; each value an ``Item`` model (a detached copy).

    A host pages items out as it does from the reference's dict: ``del fold.items[id]`` (or ``pop``) retires the
    item; the others keep their ordinals and new items still take ``fold.next``. Items are made only by folding:
    assigning one raises ``TypeError``.
    """

    __slots__ = ("_fold",)

    def __init__(self, fold: Any) -> None:
        self._fold = fold

    def __getitem__(self, key: str) -> Item:
        item = self._fold._item(key) if isinstance(key, str) else None
        if item is None:
            raise KeyError(key)
        return item  # type: ignore[no-any-return]

    def __setitem__(self, key: str, value: Item) -> None:
        raise TypeError("DisplayFold.items holds what the fold made: an item can be retired (del), not assigned")

    def __delitem__(self, key: str) -> None:
        if not (isinstance(key, str) and self._fold._retire(key)):
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._fold._item_ids())

    def clear(self) -> None:
        for key in self._fold._item_ids():
            self._fold._retire(key)

    def popitem(self) -> tuple[str, Item]:
        """The newest item, retired (a dict pops its last key)."""
        ids = self._fold._item_ids()
        if not ids:
            raise KeyError("popitem(): the fold has no items")
        key = ids[-1]
        item = self[key]
        del self[key]
        return key, item

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

    # The named methods of `set` that hosts call on the reference's `changed` (the operators come with MutableSet).

    def copy(self) -> set[str]:
        return set(self)

    def update(self, *others: Iterable[str]) -> None:
        for other in others:
            self |= set(other)

    def intersection_update(self, *others: Iterable[str]) -> None:
        for other in others:
            self &= set(other)

    def difference_update(self, *others: Iterable[str]) -> None:
        for other in others:
            self -= set(other)

    def union(self, *others: Iterable[str]) -> set[str]:
        return set(self).union(*others)

    def intersection(self, *others: Iterable[str]) -> set[str]:
        return set(self).intersection(*others)

    def difference(self, *others: Iterable[str]) -> set[str]:
        return set(self).difference(*others)

    def issubset(self, other: Iterable[str]) -> bool:
        return set(self).issubset(other)

    def issuperset(self, other: Iterable[str]) -> bool:
        return set(self).issuperset(other)

    def __repr__(self) -> str:
        return repr(set(self))
