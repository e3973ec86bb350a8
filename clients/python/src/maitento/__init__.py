"""The Python SDK of Maitento: `Maitento` / `AsyncMaitento`, typed models, and errors by status family."""

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
    RateLimitError,
    UnprocessableEntityError,
)
from ._main import AsyncMaitento, Maitento
from ._repo import read_config_repo
from ._version import __version__
from .models import Approval, DeployPlan, Run, RunEvent, RunSummary

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
    "RateLimitError",
    "Run",
    "RunEvent",
    "RunSummary",
    "UnprocessableEntityError",
    "__version__",
    "read_config_repo",
]
