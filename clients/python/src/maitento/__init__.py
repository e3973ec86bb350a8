"""The Python SDK of Maitento: `Maitento` / `AsyncMaitento`, typed models, and errors by status family."""

from typing import TYPE_CHECKING, Any

from ._errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    InvalidArgumentError,
    MaitentoError,
    NotFoundError,
    PermissionDeniedError,
    PreconditionFailedError,
    RateLimitError,
    UnprocessableEntityError,
)
from ._main import AsyncMaitento, Maitento
from ._repo import read_config_repo
from ._version import __version__

if TYPE_CHECKING:
    from .models import Approval, DeployPlan, Run, RunEvent, RunSummary

# The models need pydantic, which is loaded on first use (a client, or one of these names), not at import.
_MODELS = frozenset({"Approval", "DeployPlan", "Run", "RunEvent", "RunSummary"})


def __getattr__(name: str) -> Any:
    if name in _MODELS:
        from . import models

        return getattr(models, name)
    raise AttributeError(f"module 'maitento' has no attribute {name!r}")

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "Approval",
    "AsyncMaitento",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "DeployPlan",
    "InternalServerError",
    "InvalidArgumentError",
    "Maitento",
    "MaitentoError",
    "NotFoundError",
    "PermissionDeniedError",
    "PreconditionFailedError",
    "RateLimitError",
    "Run",
    "RunEvent",
    "RunSummary",
    "UnprocessableEntityError",
    "__version__",
    "read_config_repo",
]
