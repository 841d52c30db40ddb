"""Public names a package imports on first use (PEP 562), so that its import stays light."""

import importlib


def lazy_names(package, namespace, names):
    """(``__getattr__``, ``__dir__``) for the package ``package`` whose module globals are
    ``namespace``: each public name of ``names`` (name -> relative module that defines it) is
    imported on first use and then kept in ``namespace``."""

    def __getattr__(name):
        if name in names:
            value = getattr(importlib.import_module(names[name], package), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
