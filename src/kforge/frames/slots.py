"""Building and copying frames field by field, as straight-line code made once per class.

Every step builds a few frames and stamps each with its run id and seq (a copy). A frozen
dataclass's own ``__init__`` sets each field through ``object.__setattr__`` (the frozen class
refuses a plain assignment), which finds the field's slot again on every call; the code made
here calls each slot's setter, bound once, and reads fields as plain attributes. It does what
the dataclass's code does, in the same order (a default factory is called where its field is
set), for frozen dataclasses with slots and without ``__post_init__``; other classes keep
their own ``__init__``. Frames get it as they are defined (``Frame.__init_subclass__``); the
few other records made at every step (a model's reply, a message, a tool's result) take it with
``@built_by_slots``.
"""

from __future__ import annotations

import dataclasses
import functools
import keyword
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["built_by_slots", "fast_init", "stamper"]

C = TypeVar("C", bound=type[Any])

_MISSING = object()
"""The default of a field whose default comes from a factory (no caller passes it)."""


def _slot_setters(cls: type[Any], names: list[str]) -> dict[str, Any] | None:
    """Each field's slot setter, bound once; None when a field is not a plain slot."""
    setters: dict[str, Any] = {}
    for name in names:
        slot: Any = getattr(cls, name, None)
        if type(slot).__name__ != "member_descriptor":
            return None
        setters[name] = slot.__set__
    return setters


def _plain_names(names: list[str]) -> bool:
    """Whether field names can be parameters of the generated code without clashing with its
    own names (which all start with an underscore) or Python's words."""
    return all(
        name.isidentifier()
        and not name.startswith("_")
        and not keyword.iskeyword(name)
        and name != "self"
        for name in names
    )


def fast_init(cls: type[Any]) -> Callable[..., None] | None:
    """An ``__init__`` for the frozen, slotted dataclass ``cls`` that does what its generated
    one does, setting each slot through its setter; None when ``cls`` is not such a class (it
    then keeps its own)."""
    if "__dataclass_fields__" not in cls.__dict__ or hasattr(cls, "__post_init__"):
        return None
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    if any(not f.init for f in fields) or not _plain_names(names):
        return None
    setters = _slot_setters(cls, names)
    if setters is None:
        return None
    namespace: dict[str, Any] = {"_MISSING": _MISSING}
    params: dict[bool, list[str]] = {False: [], True: []}
    body: list[str] = []
    for i, f in enumerate(fields):
        namespace[f"_set{i}"] = setters[f.name]
        value = f.name
        keyword = f.kw_only is True
        if f.default is not dataclasses.MISSING:
            namespace[f"_default{i}"] = f.default
            params[keyword].append(f"{f.name}=_default{i}")
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory{i}"] = f.default_factory
            params[keyword].append(f"{f.name}=_MISSING")
            value = f"_factory{i}() if {f.name} is _MISSING else {f.name}"
        else:
            params[keyword].append(f.name)
        body.append(f"    _set{i}(self, {value})")
    signature = ["self", *params[False], *(["*", *params[True]] if params[True] else [])]
    source = f"def __init__({', '.join(signature)}):\n" + "\n".join(body or ["    pass"])
    exec(source, namespace)
    init: Callable[..., None] = namespace["__init__"]
    original = cls.__dict__.get("__init__")
    if original is not None:
        # the dataclass's signature and names (``<factory>`` defaults included)
        functools.update_wrapper(init, original)
    return init


def built_by_slots(cls: C) -> C:
    """Class decorator (above ``@dataclass``): ``cls`` built by ``fast_init``'s code."""
    init = fast_init(cls)
    if init is not None:
        cls.__init__ = init
    return cls


def stamper(cls: type[Any], skip: tuple[str, ...]) -> Callable[[Any], Any] | None:
    """A function making a copy of a ``cls`` instance field by field, without re-running
    ``__init__``, but for the fields ``skip`` (left for the caller to set); None when a field
    of ``cls`` is not a plain slot."""
    names = [f.name for f in dataclasses.fields(cls) if f.name not in skip]
    setters = _slot_setters(cls, names)
    if setters is None or not _plain_names(names):
        return None
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    body = ["    copy = _new(_cls)"]
    for i, name in enumerate(names):
        namespace[f"_set{i}"] = setters[name]
        body.append(f"    _set{i}(copy, source.{name})")
    body.append("    return copy")
    exec("def stamp(source):\n" + "\n".join(body), namespace)
    made: Callable[[Any], Any] = namespace["stamp"]
    return made
