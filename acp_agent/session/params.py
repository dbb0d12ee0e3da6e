"""A method's params → its ACP model, or -32602 naming the first bad field: for every handler."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import ValidationError

from acp_agent.errors import RpcError
from acp_agent.protocol.base import AcpModel, describe_validation_error

__all__ = ["parse"]

M = TypeVar("M", bound=AcpModel)


def parse(model: type[M], params: Any) -> M:
    """Validate params into `model`, or raise -32602 naming the first bad field."""
    if not isinstance(params, dict):
        raise RpcError.invalid_params("Invalid params: params must be an object")
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        message, details = describe_validation_error(exc)
        raise RpcError.invalid_params(message, {"errors": details}) from None
