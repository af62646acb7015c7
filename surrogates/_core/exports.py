"""Lazy public names and the module paths of earlier versions.

A package lists where each public name is defined; the defining module is imported when the
name is first used, so importing a package costs nothing until one of its names is needed.
Modules moved since version 0.1 keep their old import paths (old pickles name them), served
by a finder that hands out the module at its new place.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys


def lazy_exports(package: str, where: dict[str, str]):
    """``(__getattr__, __dir__)`` for a package whose names ``where[name]`` (a module,
    relative to ``package``) defines."""
    module = sys.modules[package]

    def __getattr__(name):
        if name in where:
            value = getattr(importlib.import_module(where[name], package), name)
            setattr(module, name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(vars(module)) | set(where))

    return __getattr__, __dir__


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``old`` module names as the modules now at ``moved[old]`` (the same objects, so
    classes unpickled through an old path are the current classes).  A module moved more than
    once (``moved[moved[old]]``) is served from its last place."""

    def __init__(self, moved: dict[str, str]):
        self.moved = dict(moved)
        self._target = {old: self._last_place(old) for old in self.moved}
        self._specs = {}

    def _last_place(self, name: str) -> str:
        seen = {name}
        while name in self.moved:
            name = self.moved[name]
            if name in seen:
                raise ValueError(f"modules moved in a cycle through {name!r}")
            seen.add(name)
        return name

    def find_spec(self, name, path=None, target=None):
        if name in self.moved:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        module = importlib.import_module(self._target[spec.name])
        self._specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module):
        # the import system stamped the alias's spec on the module: give it back its own
        module.__spec__ = self._specs.pop(module.__name__)

    @classmethod
    def install(cls, moved: dict[str, str]) -> None:
        if not any(isinstance(f, cls) and f.moved == moved for f in sys.meta_path):
            sys.meta_path.append(cls(moved))
