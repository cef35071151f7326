"""Deferred imports: what clemcore imports but a play seldom uses runs only when it is used.

Importing clemcore was most of the time `playpen play -g wordle -m expert` needed to record its first episode
(docs/benchmarks.md, "Start-up"), and two parts of it a play with an expert or an API model never uses:

- nltk (with scipy, scikit-learn and pandas below it). clemcore.backends imports it for one call at
  run time (`nltk.featstruct.unify`, matching model specs) and a few games (taboo, dond) use its stemmer.
  It is loaded with the standard library's `importlib.util.LazyLoader`: `import nltk` binds a module
  object at once, and the package executes on the first attribute access (or submodule import).
- openenv's web UI (gradio). openenv's server package imports it as an optional part
  (`try: from .web_interface import ... except ModuleNotFoundError`), for `clem serve` with
  ENABLE_WEB_INTERFACE. LazyLoader cannot defer it (that `from` import reads its attributes at once), so
  while the server package is being imported it is reported missing and openenv takes its own path for a
  machine without gradio (`openenv.core.env_server.create_web_interface_app` is None). A server that asks
  for the web UI imports the module itself, later (http_server.create_app), and that import is untouched.

`install()` runs when the playpen package is imported, so before anything Playpen runs imports clemcore.
Set PLAYPEN_EAGER_IMPORTS=1 to import everything eagerly, as without Playpen.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import threading
from pathlib import Path
from types import ModuleType

# Packages executed on first use.
DEFERRED = ("nltk",)
# Optional modules a package imports in `try ... except ModuleNotFoundError` while it is itself being
# imported: module -> that package. Reported missing then only (and only while the package's source still
# has that `try`); imported normally afterwards.
OPTIONAL_AT_IMPORT = {"openenv.core.env_server.web_interface": "openenv.core.env_server"}


def _initializing(name: str) -> bool:
    """Whether module `name` is being executed right now (importlib's own flag on the module's spec)."""
    module = sys.modules.get(name)
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def _imports_optionally(package: str, module: str) -> bool:
    """Whether `package`'s code imports `module` in `try: from .module import ... except ModuleNotFoundError`
    (or ImportError), i.e. goes on without it. Read from its source, so that a release that needs the module
    gets it: Playpen then starts slower, never fails."""
    origin = getattr(getattr(sys.modules.get(package), "__spec__", None), "origin", None)
    try:
        source = Path(origin).read_text(encoding="utf-8")
    except (TypeError, OSError, UnicodeDecodeError):
        return False
    leaf = re.escape(module.rpartition(".")[2])
    return re.search(rf"try:\s*\n\s*from \.{leaf} import [^\n(]*\n\s*except (ModuleNotFoundError|ImportError)\b",
                     source) is not None


class _Recording(importlib.abc.Loader):
    """Wraps a deferred package's real loader: puts the real loader back on the module before executing it
    (resource readers use it) and tells the finder which submodules that execution imported."""

    def __init__(self, loader: importlib.abc.Loader, finder: DeferringFinder):
        self.loader = loader
        self.finder = finder

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__.loader = module.__loader__ = self.loader
        before = set(sys.modules)
        self.loader.exec_module(module)
        prefix = module.__name__ + "."
        self.finder.just_imported = {name for name in set(sys.modules) - before if name.startswith(prefix)}


class _AlreadyImported(importlib.abc.Loader):
    """Hands back, unchanged, a module the execution of its deferred package has just imported."""

    def __init__(self, spec: importlib.machinery.ModuleSpec):
        self.spec = spec  # the module's own spec, which importlib overwrites with the one serving it

    def create_module(self, spec):
        return sys.modules[spec.name]

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self.spec


_EXECUTING = threading.RLock()


class _LazyModule(ModuleType):
    """A module whose code runs on first attribute access, as the standard library's lazy module, with what
    that one lacks on CPython 3.11: reading `__spec__` does not execute it (every `import nltk` reads it, to
    know whether the module is still being initialised, so clemcore's second `import nltk` would), and a
    thread touching it while another executes it waits for the end instead of seeing it half filled."""

    def __getattribute__(self, attr: str):
        if attr == "__spec__":
            return object.__getattribute__(self, "__spec__")
        with _EXECUTING:
            if object.__getattribute__(self, "__class__") is _LazyModule:
                state = object.__getattribute__(self, "__spec__").loader_state
                if not state.get("executing"):  # else: this thread is executing it and sees it as it fills
                    state["executing"] = True
                    try:
                        _execute(self)
                    finally:
                        self.__class__ = ModuleType
        return ModuleType.__getattribute__(self, attr)

    def __delattr__(self, attr: str) -> None:
        self.__getattribute__(attr)  # executes it, and raises for a missing attribute
        delattr(self, attr)


def _execute(module: ModuleType) -> None:
    """Run a deferred module's code; what was set on it while deferred (e.g. a submodule imported with it)
    is kept, as an eager import would have."""
    spec = object.__getattribute__(module, "__spec__")
    then = spec.loader_state["__dict__"]
    now = object.__getattribute__(module, "__dict__")
    updated = {key: value for key, value in now.items() if key not in then or then[key] is not value}
    spec.loader.exec_module(module)
    if sys.modules.get(spec.name, module) is not module:
        raise ValueError(f"module {spec.name!r} was replaced in sys.modules while it was deferred")
    now.update(updated)


class _LazyLoader(importlib.util.LazyLoader):
    """The standard library's lazy loader, with the module class above."""

    def exec_module(self, module: ModuleType) -> None:
        super().exec_module(module)
        module.__class__ = _LazyModule


class DeferringFinder(importlib.abc.MetaPathFinder):
    """A `sys.meta_path` finder for the names above; every other import passes through untouched."""

    def __init__(self, deferred=DEFERRED, optional_at_import=None):
        self.deferred = frozenset(deferred)
        self.optional_at_import = dict(OPTIONAL_AT_IMPORT if optional_at_import is None else optional_at_import)
        self.just_imported: set[str] = set()

    def find_spec(self, name, path, target=None):
        just_imported, self.just_imported = self.just_imported, set()
        if name in just_imported and name in sys.modules:
            # `import nltk.stem` while nltk is still deferred: importlib reads nltk.__path__, which executes
            # nltk, which imports nltk.stem; importlib then looks nltk.stem up again (it checked before) and would
            # execute it a second time. The import asks right away, so the module it already has is reused.
            existing = sys.modules[name]
            return importlib.util.spec_from_loader(name, _AlreadyImported(existing.__spec__))
        package = self.optional_at_import.get(name)
        if package is not None and _initializing(package) and _imports_optionally(package, name):
            raise ModuleNotFoundError(f"{name} is imported when used (playpen.lazy)", name=name)
        if name not in self.deferred:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is None or not hasattr(spec.loader, "exec_module"):
                    return None  # a namespace package or an old-style loader: left to importlib
                spec.loader = _LazyLoader(_Recording(spec.loader, self))
                return spec
        return None


def install() -> DeferringFinder | None:
    """Put the finder first on sys.meta_path (once); not when PLAYPEN_EAGER_IMPORTS is set."""
    if os.environ.get("PLAYPEN_EAGER_IMPORTS", "") not in ("", "0"):
        return None
    for finder in sys.meta_path:
        if isinstance(finder, DeferringFinder):
            return finder
    finder = DeferringFinder()
    sys.meta_path.insert(0, finder)
    return finder
