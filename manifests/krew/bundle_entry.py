"""The entry point of the self-contained ``kubectl-ome`` (manifests/krew/kubectl-ome.spec).

PyInstaller's bootloader starts this process with ``LD_LIBRARY_PATH`` naming the bundle's own
libraries first (the user's value kept in ``LD_LIBRARY_PATH_ORIG``) and ``_PYI_*`` variables of
its own. This process has loaded its libraries by then; a program it starts (a kubeconfig's
``exec`` credential plugin) must get the environment the user gave, so it is put back before the
command runs. Then the console script runs, as ``pip install`` would run it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from ome_operator.console_scripts import kubectl_ome

#: What the bootloader adds to the environment of a one-folder bundle on Linux.
_BOOTLOADER_PREFIX = "_PYI_"
_SAVED_LIBRARY_PATH = "LD_LIBRARY_PATH_ORIG"


def user_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment as the user started ``kubectl-ome``, before the bootloader changed it."""
    kept = {
        name: value
        for name, value in environ.items()
        if not name.startswith(_BOOTLOADER_PREFIX)
        and name not in ("LD_LIBRARY_PATH", _SAVED_LIBRARY_PATH)
    }
    if _SAVED_LIBRARY_PATH in environ:
        kept["LD_LIBRARY_PATH"] = environ[_SAVED_LIBRARY_PATH]
    return kept


if __name__ == "__main__":
    restored = user_environment(os.environ)
    os.environ.clear()
    os.environ.update(restored)
    sys.exit(kubectl_ome())
