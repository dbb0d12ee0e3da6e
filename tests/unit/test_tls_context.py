"""The client's TLS context, built beside the warm-up (`acp_agent/model/tls.py`): it is the one
httpx2 would build itself, the SDK's default client verifies with it, and without it (not started,
or failed) the SDK builds its own as before."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpcore2
import pytest

from acp_agent.model.anthropic import AnthropicModel
from acp_agent.model.tls import TlsContext


def one_ca_file(tmp_path: Path) -> Path:
    """A CA file holding one certificate of the system's bundle."""
    system = ssl.get_default_verify_paths()
    source = Path(system.openssl_cafile if Path(system.openssl_cafile).is_file() else system.cafile or "")
    text = source.read_text(encoding="ascii", errors="replace")
    end = "-----END CERTIFICATE-----"
    first = text[text.index("-----BEGIN CERTIFICATE-----") : text.index(end) + len(end)]
    path = tmp_path / "one.pem"
    path.write_text(first + "\n", encoding="ascii")
    return path


def test_not_started_it_gives_nothing_and_the_sdk_builds_its_own() -> None:
    tls = TlsContext()
    assert tls.get() is None
    model = AnthropicModel(streaming=True, api_key="sk-ant-test", tls=tls.get)
    assert model._default_http_client() is None


def test_it_is_the_context_httpx2_would_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    tls = TlsContext()
    tls.start()
    built = tls.get()
    reference = httpcore2.default_ssl_context()
    assert built is not None and built is tls.get()  # built once
    assert built.verify_mode == reference.verify_mode == ssl.CERT_REQUIRED
    assert built.check_hostname is reference.check_hostname is True
    assert built.protocol == reference.protocol
    assert built.options == reference.options
    assert built.cert_store_stats() == reference.cert_store_stats()
    assert built.cert_store_stats()["x509_ca"] > 0


def test_the_environments_ca_file_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(one_ca_file(tmp_path)))
    tls = TlsContext()
    tls.start()
    built = tls.get()
    assert built is not None
    assert built.cert_store_stats()["x509_ca"] == 1


def test_a_context_that_cannot_be_built_leaves_the_sdk_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    tls = TlsContext()
    tls.start()
    assert tls.get() is None
    model = AnthropicModel(streaming=True, api_key="sk-ant-test", tls=tls.get)
    assert model._default_http_client() is None


async def test_the_sdks_default_client_verifies_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    tls = TlsContext()
    tls.start()
    model = AnthropicModel(streaming=True, api_key="sk-ant-test", base_url="https://api.example", tls=tls.get)
    model.prepare()
    client = model._client
    assert client is not None
    http = client._client  # the SDK's httpx2.AsyncClient
    pool = http._transport._pool  # httpx2's transport over httpcore2's pool
    assert pool._ssl_context is tls.get()
    assert http.follow_redirects is True  # the SDK's defaults, as its own client has them
    await model.aclose()
