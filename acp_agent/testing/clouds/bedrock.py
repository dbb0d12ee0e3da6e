"""Amazon Bedrock in front of the loopback fake: what the real service checks, in its shapes.

- The path: `POST /model/{id}/invoke` or `/invoke-with-response-stream`, the model id quoted in it
  (an ARN's `/` as `%2F`); the body without `model` and `stream`, with `anthropic_version`.
- The credentials: a SigV4 signature recomputed with botocore's own signer from the fake's known
  credentials (access key, secret, session token; service `bedrock`, the region), or a Bedrock
  API key as `Authorization: Bearer`.
- Its answers: errors as `{"message": …}` with the type in `x-amzn-ErrorType`; a stream as AWS
  event-stream frames (`application/vnd.amazon.eventstream`), each event's JSON base64-encoded
  in a `chunk`, a mid-stream failure as an `exception` frame.

botocore is imported on the first signed request only: the plain fake stays stdlib-only.
"""

from __future__ import annotations

import base64
import hmac
import json
import re
import struct
import zlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from acp_agent.testing.clouds.platform_front import PlatformFront, Special
from acp_agent.testing.replies import Error

__all__ = ["AwsCredentials", "BedrockFront", "event_frame", "exception_frame", "verify_sigv4"]

_PATH = re.compile(r"^/model/([^/]+)/(invoke|invoke-with-response-stream)$")

_AMAZON_TYPES = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
    529: "ServiceUnavailableException",
}


@dataclass(frozen=True, slots=True)
class AwsCredentials:
    """Fake AWS credentials the fake knows (give the same to the client)."""

    access_key: str = "AKIAFAKEBEDROCK00001"
    secret_key: str = "fake/secret/key/for/the/loopback/bedrock"
    session_token: str | None = "fake-session-token-of-the-loopback-bedrock"


def event_frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One AWS event-stream message: prelude (total and headers length, CRC32), string headers,
    payload, CRC32 of all before (botocore's `EventStreamBuffer` decodes it)."""
    encoded = b"".join(
        bytes([len(k)]) + k.encode() + b"\x07" + struct.pack(">H", len(v.encode())) + v.encode()
        for k, v in headers.items()
    )
    prelude = struct.pack(">II", 16 + len(encoded) + len(payload), len(encoded))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def _chunk(event: dict[str, Any]) -> bytes:
    payload = json.dumps({"bytes": base64.b64encode(json.dumps(event).encode()).decode()}).encode()
    return event_frame(
        {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}, payload
    )


def exception_frame(kind: str = "throttlingException", message: str = "Too many tokens") -> bytes:
    """A mid-stream failure as Bedrock sends it (the SDK raises it as an error event)."""
    return event_frame(
        {":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"},
        json.dumps({"message": message}).encode(),
    )


def verify_sigv4(
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes,
    creds: AwsCredentials,
    service: str,
    region: str,
) -> str | None:
    """Why this request's SigV4 signature is not the one `creds` make, or None when it is:
    recomputed with botocore's `SigV4Auth` over the headers the request says it signed."""
    from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
    from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
    from botocore.credentials import Credentials  # type: ignore[import-untyped]

    auth = headers.get("authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return "no SigV4 signature"
    try:
        scope = re.search(r"Credential=([^,]+)", auth)[1]  # type: ignore[index]
        signed = re.search(r"SignedHeaders=([^,]+)", auth)[1].split(";")  # type: ignore[index]
        signature = re.search(r"Signature=([0-9a-f]+)", auth)[1]  # type: ignore[index]
        access, _date, signed_region, signed_service, _ = scope.split("/")
    except (TypeError, ValueError):
        return "a malformed SigV4 Authorization header"
    if access != creds.access_key:
        return f"unknown access key {access}"
    if (signed_service, signed_region) != (service, region):
        return f"signed for {signed_service} in {signed_region}, not {service} in {region}"
    if creds.session_token is not None and headers.get("x-amz-security-token") != creds.session_token:
        return "no or a wrong x-amz-security-token"
    if "x-amz-date" not in headers or any(name not in headers for name in signed):
        return "a signed header is missing"
    request = AWSRequest(
        method=method,
        url=f"http://{headers['host']}{path}",
        headers={k: headers[k] for k in signed},
        data=body,
    )
    request.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(Credentials(creds.access_key, creds.secret_key, creds.session_token), service, region)
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    return None if hmac.compare_digest(expected, signature) else "the signature does not match"


class BedrockFront(PlatformFront):
    """Bedrock's Invoke API (see the module doc). Give `api_key` to accept that bearer key instead
    of (or besides) SigV4; `raw_bodies` keeps each accepted body as sent, for tests."""

    content_type = "application/vnd.amazon.eventstream"
    models_api = False

    def __init__(
        self,
        *,
        region: str = "us-east-1",
        credentials: AwsCredentials | None = None,
        api_key: str | None = None,
    ) -> None:
        super().__init__()
        self.region = region
        self.credentials = credentials or AwsCredentials()
        self.api_key = api_key
        self.paths: list[str] = []
        self.raw_bodies: list[dict[str, Any]] = []

    def route(
        self, method: str, path: str, headers: dict[str, str], body: dict[str, Any], raw: bytes
    ) -> dict[str, Any] | Error | None:
        found = _PATH.match(path.split("?", 1)[0])
        if method != "POST" or found is None:
            return None
        problem = self._auth_problem(method, path, headers, raw)
        if problem is not None:
            return self.refuse(403, "AccessDeniedException", problem)
        if "model" in body or "stream" in body:
            return self.refuse(
                400, "ValidationException", "model and stream belong in the path, not the body"
            )
        if not isinstance(body.get("anthropic_version"), str):
            return self.refuse(400, "ValidationException", "anthropic_version is required")
        with self._lock:
            self.paths.append(path)
            self.raw_bodies.append(dict(body))
        messages = {k: v for k, v in body.items() if k not in ("anthropic_version", "anthropic_beta")}
        return {**messages, "model": unquote(found[1]), "stream": found[2] == "invoke-with-response-stream"}

    def _auth_problem(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> str | None:
        if self.api_key is not None and headers.get("authorization") == f"Bearer {self.api_key}":
            return None if "x-amz-date" not in headers else "a Bearer key and a SigV4 date at once"
        return verify_sigv4(method, path, headers, raw, self.credentials, "bedrock", self.region)

    def error(self, reply: Error, request_id: str) -> Special:
        kind = (
            reply.type
            if reply.type[:1].isupper()
            else _AMAZON_TYPES.get(reply.status, "InternalServerException")
        )
        headers = {
            **reply.response_headers(),
            "x-amzn-ErrorType": f"{kind}:http://internal.amazon.com/coral/",
            "x-amzn-RequestId": request_id,
        }
        return reply.status, {"message": reply.message}, headers

    def frames(self, events: list[bytes]) -> list[bytes]:
        out = []
        for event in events:
            data = next((line[6:] for line in event.split(b"\n") if line.startswith(b"data: ")), None)
            if data is not None:
                out.append(_chunk(json.loads(data)))
        return out

    def error_frame(self) -> bytes:
        return exception_frame()
