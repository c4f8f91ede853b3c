"""kopf handlers: importing this package registers them (``kopf run -m ome_operator.handlers``).

Handlers only translate: watch events feed the controller's caches and queue, admission reviews
go to the pure admission rules. Every decision lives in ``ome_operator.core``.
"""

from . import admission, indexes, startup, watching

__all__ = ["admission", "indexes", "startup", "watching"]
