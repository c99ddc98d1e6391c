"""``DisplayFold.items`` and ``DisplayFold.changed``: live views of the fold's items and live changes.

The reference keeps a dict of items and a set of changed ids on the fold; here both live in Rust, and these views
read them when asked: an ``Item`` model is built for the item looked up, deleting one retires it (paging), and
``changed`` edits the fold's own change tracking (``clear()`` after publishing, as a host does with the reference's set).
A ``changed`` view taken before ``fold.changed`` is assigned keeps the ids it had, as the reference's set object does
once the fold holds another (``to_publish, fold.changed = fold.changed, set()``). ``copy.copy``, ``copy.deepcopy``
and ``pickle`` of a view give a plain ``dict`` or ``set``, as they would of the reference's.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator, MutableMapping, MutableSet
from typing import Any, Optional, TypeVar

from ._models import Item

_T = TypeVar("_T")


def _is_id(key: object) -> bool:
    """Whether ``key`` can be an item id: a ``str`` that is Unicode text (one holding a lone surrogate, half of a
    UTF-16 pair, can be no id, so it is no key of the fold's, as a dict would find none)."""
    if not isinstance(key, str):
        return False
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
        item = self._fold._item(key) if _is_id(key) else None
        if item is None:
            raise KeyError(key)
        return item  # type: ignore[no-any-return]

    def __setitem__(self, key: str, value: Item) -> None:
        raise TypeError("DisplayFold.items holds what the fold made: an item can be retired (del), not assigned")

    def __delitem__(self, key: str) -> None:
        if not (_is_id(key) and self._fold._retire(key)):
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._fold._item_ids())

    def __reversed__(self) -> Iterator[str]:
        ids: list[str] = self._fold._item_ids()
        return reversed(ids)

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
        return _is_id(key) and self._fold._item(key) is not None

    def copy(self) -> dict[str, Item]:
        """The items as a plain ``dict``, which later folds do not change."""
        return dict(self)

    def __copy__(self) -> dict[str, Item]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Item]:
        return {key: item.model_copy(deep=True) for key, item in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))

    def __or__(self, other: Any) -> dict[str, Item]:
        return dict(self) | dict(other)

    def __ror__(self, other: Any) -> dict[str, Item]:
        return dict(other) | dict(self)

    def __repr__(self) -> str:
        return repr(dict(self))


class Changed(MutableSet[str]):
    """The ids of items changed since the host last cleared them, in order of creation."""

    __slots__ = ("_fold", "_held", "_generation", "__weakref__")

    def __init__(self, fold: Any) -> None:
        self._fold: Any = None
        # The ids it kept, in order, when the fold's were replaced (it no longer follows the fold), else None.
        self._held: Optional[dict[str, None]] = None
        # The assignment of `fold.changed` it was taken under.
        self._generation: int = 0
        _attach(self, fold)

    @classmethod
    def _from_iterable(cls, values: Iterable[_T]) -> set[_T]:
        # What `changed - other`, `changed | other` and the like make: a plain set, as the reference's would be.
        return set(values)

    def _ids(self) -> Iterable[str]:
        return self._held if self._held is not None else self._fold._changed_ids()

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._ids()

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._ids()))

    def __len__(self) -> int:
        return len(list(self._ids())) if self._held is None else len(self._held)

    def add(self, value: str) -> None:
        """Mark an item changed (while the view follows the fold, an id the fold does not hold raises
        ``KeyError``)."""
        if self._held is not None:
            self._held[value] = None
        elif not (_is_id(value) and self._fold._set_changed(value, True)):
            raise KeyError(value)

    def discard(self, value: str) -> None:
        if self._held is not None:
            self._held.pop(value, None)
        elif _is_id(value):
            self._fold._set_changed(value, False)

    def clear(self) -> None:
        if self._held is not None:
            self._held.clear()
        else:
            self._fold._clear_changed()

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> set[str]:
        return set(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (set, (set(self),))

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


# The `changed` views each fold handed out (weakly, by the view's id), so that assigning `fold.changed` detaches
# them. Kept beside the folds, not in them: a fold's `__dict__` is its subclass's.
_VIEWS: "weakref.WeakKeyDictionary[Any, dict[int, Any]]" = weakref.WeakKeyDictionary()


def _attach(view: Changed, fold: Any) -> None:
    """Make ``view`` follow ``fold``'s changed ids (until the next assignment of ``fold.changed``)."""
    view._fold, view._held, view._generation = fold, None, fold._changed_generation
    views = _VIEWS.setdefault(fold, {})
    key = id(view)

    def forget(_: Any) -> None:
        views.pop(key, None)

    views[key] = weakref.ref(view, forget)


def detach_changed(fold: Any, ids: list[str], generation: int, assigned: Any) -> None:
    """After ``fold.changed`` was replaced (its ids were ``ids``, under assignment ``generation``): every view taken
    under it keeps those ids and no longer follows the fold, as the reference's set object stays what it was when
    the fold is given another (a view taken since, on another thread, follows the new one). A view assigned back
    (``assigned``) follows the fold again, as the reference's fold then holds that set."""
    views = _VIEWS.get(fold)
    for key, ref in list(views.items()) if views else ():
        view = ref()
        if view is not None and view is not assigned and view._generation == generation:
            view._held = dict.fromkeys(ids)
            view._fold = None
            views.pop(key, None)  # type: ignore[union-attr]
    if isinstance(assigned, Changed):
        _attach(assigned, fold)
