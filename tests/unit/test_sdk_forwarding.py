"""The SDK extension classes forward what they lack to their seam, looked up each
time: no cache keeps an extension alive or answers with a stale attribute."""

from __future__ import annotations

import gc
import weakref
from types import SimpleNamespace

from mcp_tasks.sdk.shared import forward_to_seam


class _Extension:
    def __init__(self, seam: object) -> None:
        self.seam = seam


def test_forwarding_reads_the_seam_each_time() -> None:
    seam = SimpleNamespace(server="first")
    extension = _Extension(seam)
    assert forward_to_seam(extension, "server") == "first"
    seam.server = "second"
    assert forward_to_seam(extension, "server") == "second"


def test_forwarding_keeps_no_extension_alive() -> None:
    extension = _Extension(SimpleNamespace(server="one"))
    forward_to_seam(extension, "server")
    gone = weakref.ref(extension)
    del extension
    gc.collect()
    assert gone() is None
