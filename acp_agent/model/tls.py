"""The TLS context the model client verifies the API with, built on the machine's other core.

Building it is mostly reading the CA bundle (`load_verify_locations`, ~20 ms of CPU), C code that
releases the GIL; the warm-up thread meanwhile imports the SDK, which holds it. So the warm-up
starts it in a thread of its own before the SDK (`TlsContext.start`), and the first request no
longer waits for it after the SDK (issue 46). It is the context httpx2 builds for `verify=True`
(`httpcore2.default_ssl_context`, `SSL_CERT_FILE` and `SSL_CERT_DIR` honoured), handed to the SDK's
default client (`AnthropicModel`); if it was not started, or failed, the SDK builds its own, as
before, and says what is wrong at the first request.
"""

from __future__ import annotations

import ssl
import threading
from types import ModuleType

import structlog

from acp_agent.lazy import deferred

__all__ = ["TLS_WAIT_SECONDS", "TlsContext", "http_core"]

log = structlog.get_logger(__name__)

TLS_WAIT_SECONDS = 5.0
"""How long a client being built waits for the context (it takes ~20 ms); past it, the SDK's own."""


@deferred
def http_core() -> ModuleType:
    """httpcore2, which httpx2 imports when its first client is built (~30 ms of CPU): imported
    under the deferred-import lock, so the context's thread never imports beside the warm-up."""
    import httpcore2

    return httpcore2


class TlsContext:
    """One context, built once in its own thread; `get()` waits for it."""

    def __init__(self) -> None:
        self._context: ssl.SSLContext | None = None
        self._ready = threading.Event()
        self._started = False
        self._lock = threading.Lock()

    def start(self) -> None:
        """A warm-up step: import httpcore2 here, then build the context in a thread of its own
        (it imports nothing more: two threads importing at once can deadlock, `lazy.py`)."""
        module = http_core.now()
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._build, args=(module,), name="tls-context", daemon=True).start()

    def get(self) -> ssl.SSLContext | None:
        """The context, once built (None: never started, not ready in time, or it failed)."""
        if not self._started:
            return None
        self._ready.wait(TLS_WAIT_SECONDS)
        return self._context

    def _build(self, module: ModuleType) -> None:
        try:
            self._context = module.default_ssl_context()
        except Exception as exc:  # the SDK builds its own, and says what is wrong when it is used
            log.warning("model.tls_context_failed", error=repr(exc)[:300])
        finally:
            self._ready.set()
