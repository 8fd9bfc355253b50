"""Loaders keyed by file extension.

A loader is ``loader(name, data, limits) -> (documents, failures)``: a module-level function (the
isolated ones are sent to the parsing worker by reference, so they must be importable there).
``isolated=True`` runs it in the worker process under the CPU, memory and wall-clock limits; text
formats whose cost is linear in the (size-capped) bytes run in-process. ``core.loaders`` registers
the built-in formats; ``register_loader`` adds another (a plug-in, or a test's hostile loader) and
``unregister_loader`` takes it away again.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from core.parsing.limits import ParseLimits
from core.parsing.text import Result

Loader = Callable[[str, bytes, ParseLimits], Result]


@dataclass(frozen=True)
class LoaderSpec:
    """A registered loader and where it runs."""

    extension: str
    loader: Loader
    isolated: bool


_REGISTRY: dict[str, LoaderSpec] = {}


def _key(extension: str) -> str:
    ext = extension.lower()
    return ext if ext.startswith(".") else "." + ext


def register_loader(extension: str, loader: Loader, isolated: bool = True) -> None:
    """Use ``loader`` for files ending in ``extension`` (replacing any loader registered for it)."""
    key = _key(extension)
    if len(key) < 2:
        raise ValueError("an extension is needed, e.g. '.txt'")
    _REGISTRY[key] = LoaderSpec(key, loader, isolated)


def unregister_loader(extension: str) -> None:
    """Forget the loader of ``extension`` (no error when none is registered)."""
    _REGISTRY.pop(_key(extension), None)


def loader_for(extension: str) -> LoaderSpec | None:
    """The loader registered for ``extension``, if any."""
    return _REGISTRY.get(_key(extension))


def registered_extensions() -> set[str]:
    """Every extension with a loader."""
    return set(_REGISTRY)
