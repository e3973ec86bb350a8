"""The resource namespaces of the clients."""

from ._async import (
    Agents as AsyncAgents,
    Approvals as AsyncApprovals,
    Connectors as AsyncConnectors,
    Deploys as AsyncDeploys,
    Extops as AsyncExtops,
    Interactions as AsyncInteractions,
    Keys as AsyncKeys,
    Namespaces as AsyncNamespaces,
    Secrets as AsyncSecrets,
)
from ._sync import Agents, Approvals, Connectors, Deploys, Extops, Interactions, Keys, Namespaces, Secrets
from .runs import AsyncInteractionRuns, AsyncRunsPage, InteractionRuns, RunsPage

__all__ = [
    "Agents",
    "Approvals",
    "AsyncAgents",
    "AsyncApprovals",
    "AsyncConnectors",
    "AsyncDeploys",
    "AsyncExtops",
    "AsyncInteractionRuns",
    "AsyncInteractions",
    "AsyncKeys",
    "AsyncNamespaces",
    "AsyncRunsPage",
    "AsyncSecrets",
    "Connectors",
    "Deploys",
    "Extops",
    "InteractionRuns",
    "Interactions",
    "Keys",
    "Namespaces",
    "RunsPage",
    "Secrets",
]
