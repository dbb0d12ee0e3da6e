"""The ACP schema's definitions, made from the official Python SDK's models.

The test extra installs `agent-client-protocol`, the protocol's official Python SDK. It ships no
schema file, but its `acp.schema` holds a pydantic model for each definition of the official JSON
schema (v1.19, generated from the unstable file), under the definition's own name. The JSON schema
of those models is the definition again, and `schema.py` validates each message against it with
jsonschema. The models themselves are not used to validate: they are lenient on purpose (a
malformed optional field becomes its default, a bad list item is dropped: `salvage_on_error`),
which suits a client and would hide the very mistakes these checks exist to catch.

What ACP v1 added after 1.19 and the agent speaks is written out in `schema_newer.py` and joined
in here; `METHODS` says which definitions belong to which method (the generated models do not).
"""

from __future__ import annotations

import copy
import inspect
from functools import cache
from typing import Any

from acp import meta as sdk_meta
from acp import schema as sdk
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import models_json_schema

from tests.support.schema_newer import FIELDS_ADDED, NEWER_METHODS, NEWER_UPDATES, UNSTABLE_UPDATES

__all__ = ["METHODS", "SDK_SCHEMA_REF", "definitions", "sdk_methods"]

SDK_SCHEMA_REF = "refs/tags/schema-v1.19.0"
"""The schema the installed SDK was generated from (the first lines of `acp/schema.py` say so)."""

_REF = "#/$defs/{model}"

METHODS: dict[str, tuple[str, tuple[str, ...]]] = {
    # handled by the agent: the client sends the request, the agent answers with the response
    "initialize": ("agent", ("InitializeRequest", "InitializeResponse")),
    "authenticate": ("agent", ("AuthenticateRequest", "AuthenticateResponse")),
    "logout": ("agent", ("LogoutRequest", "LogoutResponse")),
    "providers/list": ("agent", ("ListProvidersRequest", "ListProvidersResponse")),
    "providers/set": ("agent", ("SetProviderRequest", "SetProviderResponse")),
    "providers/disable": ("agent", ("DisableProviderRequest", "DisableProviderResponse")),
    "session/new": ("agent", ("NewSessionRequest", "NewSessionResponse")),
    "session/load": ("agent", ("LoadSessionRequest", "LoadSessionResponse")),
    "session/list": ("agent", ("ListSessionsRequest", "ListSessionsResponse")),
    "session/delete": ("agent", ("DeleteSessionRequest", "DeleteSessionResponse")),
    "session/fork": ("agent", ("ForkSessionRequest", "ForkSessionResponse")),
    "session/resume": ("agent", ("ResumeSessionRequest", "ResumeSessionResponse")),
    "session/close": ("agent", ("CloseSessionRequest", "CloseSessionResponse")),
    "session/set_mode": ("agent", ("SetSessionModeRequest", "SetSessionModeResponse")),
    # its request is one of two shapes (a boolean option or a select), with no name of its own
    "session/set_config_option": ("agent", ("SetSessionConfigOptionResponse",)),
    "session/prompt": ("agent", ("PromptRequest", "PromptResponse")),
    "session/cancel": ("agent", ("CancelNotification",)),
    "nes/start": ("agent", ("StartNesRequest", "StartNesResponse")),
    "nes/suggest": ("agent", ("SuggestNesRequest", "SuggestNesResponse")),
    "nes/accept": ("agent", ("AcceptNesNotification",)),
    "nes/reject": ("agent", ("RejectNesNotification",)),
    "nes/close": ("agent", ("CloseNesRequest", "CloseNesResponse")),
    "document/didOpen": ("agent", ("DidOpenDocumentNotification",)),
    "document/didChange": ("agent", ("DidChangeDocumentNotification",)),
    "document/didClose": ("agent", ("DidCloseDocumentNotification",)),
    "document/didSave": ("agent", ("DidSaveDocumentNotification",)),
    "document/didFocus": ("agent", ("DidFocusDocumentNotification",)),
    # handled by the client: the agent sends these
    "session/request_permission": ("client", ("RequestPermissionRequest", "RequestPermissionResponse")),
    "session/update": ("client", ("SessionNotification",)),
    "fs/read_text_file": ("client", ("ReadTextFileRequest", "ReadTextFileResponse")),
    "fs/write_text_file": ("client", ("WriteTextFileRequest", "WriteTextFileResponse")),
    "terminal/create": ("client", ("CreateTerminalRequest", "CreateTerminalResponse")),
    "terminal/output": ("client", ("TerminalOutputRequest", "TerminalOutputResponse")),
    "terminal/release": ("client", ("ReleaseTerminalRequest", "ReleaseTerminalResponse")),
    "terminal/wait_for_exit": ("client", ("WaitForTerminalExitRequest", "WaitForTerminalExitResponse")),
    "terminal/kill": ("client", ("KillTerminalRequest", "KillTerminalResponse")),
    "mcp/connect": ("client", ("ConnectMcpRequest", "ConnectMcpResponse")),
    "mcp/disconnect": ("client", ("DisconnectMcpRequest", "DisconnectMcpResponse")),
    "elicitation/create": ("client", ("CreateElicitationRequest", "CreateElicitationResponse")),
    "elicitation/complete": ("client", ("CompleteElicitationNotification",)),
    # either side handles these (MCP over ACP; a request may be cancelled either way)
    "mcp/message": ("both", ("MessageMcpRequest", "MessageMcpNotification")),
    "$/cancel_request": ("protocol", ("CancelRequestNotification",)),
    **{
        method: (side, tuple(model.__name__ for model in models))
        for method, (side, models) in NEWER_METHODS.items()
    },
}
"""Each method → the side that handles it, and its definitions: named `…Request`, `…Response` or
`…Notification`, as in the official schema. `tests/unit/test_schema_support.py` checks that the
SDK's own method lists (`acp.meta`) agree and that every name here is a definition."""


def sdk_methods() -> dict[str, str]:
    """The SDK's methods (from the schema's `meta.json`) → the side that handles each."""
    sides: dict[str, str] = {}
    for side, methods in (("agent", sdk_meta.AGENT_METHODS), ("client", sdk_meta.CLIENT_METHODS)):
        for method in methods.values():
            sides[method] = "both" if sides.get(method, side) != side else side
    return sides


def definitions(*, unstable: bool) -> dict[str, Any]:
    """The `$defs` of the schema the agent speaks: every definition of the SDK's, with the later
    additions; without `unstable`, a session update of an unstable kind is not a valid one."""
    defs = dict(_all_definitions())
    notification = copy.deepcopy(defs["SessionNotification"])
    update = notification["properties"]["update"]
    kinds: dict[str, str] = update["discriminator"]["mapping"]
    for kind in [k for k in kinds if not unstable and k in UNSTABLE_UPDATES]:
        del kinds[kind]
    update["oneOf"] = [{"$ref": ref} for ref in kinds.values()]
    defs["SessionNotification"] = notification
    return defs


@cache
def _all_definitions() -> dict[str, Any]:
    newer = [*NEWER_UPDATES.values(), *(m for _, models in NEWER_METHODS.values() for m in models)]
    _, top = models_json_schema([(m, "validation") for m in [*_sdk_models(), *newer]], ref_template=_REF)
    defs: dict[str, Any] = top["$defs"]
    for names in (names for _, names in METHODS.values()):
        for name in (n for n in names if n not in defs and hasattr(sdk, n)):
            defs[name] = _schema_of(getattr(sdk, name), defs)  # a union, not a model
    for name, fields in FIELDS_ADDED.items():
        properties = defs[name]["properties"]
        for field, annotation in fields.items():
            properties.setdefault(field, _schema_of(annotation, defs))
    update = defs["SessionNotification"]["properties"]["update"]
    for kind, model in NEWER_UPDATES.items():
        update["discriminator"]["mapping"].setdefault(kind, _REF.format(model=model.__name__))
    return defs


def _sdk_models() -> list[type[BaseModel]]:
    return [
        value
        for name, value in vars(sdk).items()
        if inspect.isclass(value)
        and issubclass(value, BaseModel)
        and value.__module__ == sdk.__name__
        and not name.startswith("_")
    ]


def _schema_of(annotation: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema of a type, its own definitions joined to `defs`."""
    schema: dict[str, Any] = TypeAdapter(annotation).json_schema(ref_template=_REF)
    for name, definition in schema.pop("$defs", {}).items():
        defs.setdefault(name, definition)
    return schema
