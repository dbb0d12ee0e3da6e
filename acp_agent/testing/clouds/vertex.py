"""Google's Vertex AI in front of the loopback fake, with a fake OAuth token endpoint.

- The path: `POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict`
  (`:streamRawPredict` for a stream, and then `stream: true` in the body); the body without
  `model`, with `anthropic_version`.
- The credentials: `Authorization: Bearer` with a token this fake issued, or `access_token`.
- Its token endpoint (`POST /token`): what google-auth sends for a service account, a JWT signed
  with the account's key (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`); the fake
  checks the RS256 signature with the account's public key, the audience and the scope, and
  answers `{"access_token", "expires_in"}`. `service_account_file()` writes such an account (a
  fresh RSA key, `token_uri` pointing here) for `GOOGLE_APPLICATION_CREDENTIALS`.

`cryptography` is imported only to make or check a key: the plain fake stays stdlib-only.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote

from acp_agent.testing.clouds.platform_front import PlatformFront, Special
from acp_agent.testing.replies import Error

__all__ = ["VertexFront"]

_PATH = re.compile(
    r"^/v1/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/([^/:]+):(rawPredict|streamRawPredict)$"
)
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"


def _b64decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


class VertexFront(PlatformFront):
    """Vertex AI's Claude endpoints for one project and region (see the module doc)."""

    models_api = False

    def __init__(
        self,
        *,
        project: str = "fake-project",
        region: str = "us-east5",
        access_token: str | None = None,
        expires_in: int = 3600,
    ) -> None:
        super().__init__()
        self.project = project
        self.region = region
        self.expires_in = expires_in
        self.tokens: set[str] = {access_token} if access_token else set()
        """Bearer tokens accepted: the given one and those the token endpoint issued."""
        self.tokens_issued = 0
        self.paths: list[str] = []
        self.raw_bodies: list[dict[str, Any]] = []
        self._numbers = itertools.count(1)
        self._public_key: Any = None
        self._account = ""
        self.base_url = ""
        """The fake's base URL, for the token endpoint's audience (set by `service_account_file`)."""

    def service_account_file(self, path: Path, base_url: str) -> Path:
        """Write a service account JSON for this fake (a fresh 2048-bit RSA key) and return it."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self._public_key = key.public_key()
        self._account = f"agent@{self.project}.iam.gserviceaccount.com"
        self.base_url = base_url
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        data = {
            "type": "service_account",
            "project_id": self.project,
            "private_key_id": "fake-key-1",
            "private_key": pem,
            "client_email": self._account,
            "client_id": "1",
            "token_uri": f"{base_url}/token",
            "universe_domain": "googleapis.com",
        }
        path.write_text(json.dumps(data), encoding="utf-8")
        path.chmod(0o600)
        return path

    def special(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Special | None:
        if method != "POST" or path != "/token":
            return None
        form = {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}
        problem = self._assertion_problem(form)
        if problem is not None:
            with self._lock:
                self.refused.append(problem)
            return 400, {"error": "invalid_grant", "error_description": problem}, {}
        with self._lock:
            token = f"ya29.fake-vertex-token-{next(self._numbers)}"
            self.tokens.add(token)
            self.tokens_issued += 1
        return 200, {"access_token": token, "expires_in": self.expires_in, "token_type": "Bearer"}, {}

    def _assertion_problem(self, form: dict[str, str]) -> str | None:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        if form.get("grant_type") != JWT_GRANT or "assertion" not in form:
            return "not a JWT bearer grant"
        if self._public_key is None:
            return "no service account was made for this fake"
        try:
            head, claims, signature = form["assertion"].split(".")
            header, payload = json.loads(_b64decode(head)), json.loads(_b64decode(claims))
            self._public_key.verify(
                _b64decode(signature), f"{head}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256()
            )
        except (ValueError, InvalidSignature):
            return "the assertion's signature does not verify"
        if header.get("alg") != "RS256":
            return "not RS256"
        audiences = (f"{self.base_url}/token", GOOGLE_TOKEN_URI)  # google-auth signs for Google's
        if payload.get("iss") != self._account or payload.get("aud") not in audiences:
            return f"wrong issuer or audience ({payload.get('iss')}, {payload.get('aud')})"
        if SCOPE not in str(payload.get("scope", "")).split():
            return "no cloud-platform scope"
        if not payload.get("iat", 0) <= time.time() + 60 < payload.get("exp", 0) + 60:
            return "an expired assertion"
        return None

    def route(
        self, method: str, path: str, headers: dict[str, str], body: dict[str, Any], raw: bytes
    ) -> dict[str, Any] | Error | None:
        found = _PATH.match(path.split("?", 1)[0])
        if method != "POST" or found is None:
            return None
        project, region, model, specifier = found.groups()
        bearer = headers.get("authorization", "").removeprefix("Bearer ")
        with self._lock:
            known = bearer in self.tokens
        if not known:
            return self.refuse(401, "UNAUTHENTICATED", "no valid bearer token")
        if (project, region) != (self.project, self.region):
            return self.refuse(404, "NOT_FOUND", f"no such endpoint: project {project}, location {region}")
        if "model" in body:
            return self.refuse(400, "INVALID_ARGUMENT", "model belongs in the path")
        if not isinstance(body.get("anthropic_version"), str):
            return self.refuse(400, "INVALID_ARGUMENT", "anthropic_version is required")
        streaming = specifier == "streamRawPredict"
        if (body.get("stream") is True) != streaming:
            return self.refuse(400, "INVALID_ARGUMENT", f"{specifier} with stream={body.get('stream')}")
        with self._lock:
            self.paths.append(path)
            self.raw_bodies.append(dict(body))
        return {
            **{k: v for k, v in body.items() if k != "anthropic_version"},
            "model": unquote(model),
            "stream": streaming,
        }

    def error(self, reply: Error, request_id: str) -> Special:
        """Google's own errors (auth, routing) in its shape; the model's as the Anthropic API's."""
        if reply.type.isupper():
            body = {"error": {"code": reply.status, "message": reply.message, "status": reply.type}}
            return reply.status, body, reply.response_headers()
        return super().error(reply, request_id)
