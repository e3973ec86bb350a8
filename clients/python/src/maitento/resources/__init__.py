"""The resource namespaces of the clients."""

from ._async import (
    Agents as AsyncAgents,
    Approvals as AsyncApprovals,
    Audit as AsyncAudit,
    Connectors as AsyncConnectors,
    Deploys as AsyncDeploys,
    Extops as AsyncExtops,
    Interactions as AsyncInteractions,
    Keys as AsyncKeys,
    Namespaces as AsyncNamespaces,
    Secrets as AsyncSecrets,
)
from ._sync import Agents, Approvals, Audit, Connectors, Deploys, Extops, Interactions, Keys, Namespaces, Secrets
from .file_systems import AsyncFileSystems, FileContent, FileSystems
from .knowledge_bases import AsyncKnowledgeBases, KnowledgeBases
from .runs import AsyncInteractionRuns, AsyncRunsPage, InteractionRuns, RunsPage

__all__ = [
    "Agents",
    "Approvals",
    "Audit",
    "AsyncAgents",
    "AsyncApprovals",
    "AsyncAudit",
    "AsyncConnectors",
    "AsyncDeploys",
    "AsyncExtops",
    "AsyncFileSystems",
    "AsyncInteractionRuns",
    "AsyncInteractions",
    "AsyncKeys",
    "AsyncKnowledgeBases",
    "AsyncNamespaces",
    "AsyncRunsPage",
    "AsyncSecrets",
    "Connectors",
    "Deploys",
    "Extops",
    "FileContent",
    "FileSystems",
    "InteractionRuns",
    "Interactions",
    "Keys",
    "KnowledgeBases",
    "Namespaces",
    "RunsPage",
    "Secrets",
]
