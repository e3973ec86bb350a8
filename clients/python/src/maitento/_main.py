"""`Maitento` and `AsyncMaitento`: the clients, each resource a namespace (`mt.interaction_runs.start(...)`)."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

import httpx

from ._base import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT
from ._client import AsyncAPIClient, SyncAPIClient

if TYPE_CHECKING:
    from .resources import (
        Agents,
        Approvals,
        AsyncAgents,
        AsyncApprovals,
        AsyncAudit,
        AsyncAuthProviders,
        AsyncConnections,
        AsyncSchedules,
        AsyncTriggers,
        AsyncUsage,
        Audit,
        AuthProviders,
        Connections,
        AsyncConnectors,
        AsyncDeploys,
        AsyncExtops,
        AsyncFileSystems,
        AsyncInteractionRuns,
        AsyncInteractions,
        AsyncKeys,
        AsyncKnowledgeBases,
        AsyncNamespaces,
        AsyncSecrets,
        AsyncWebhooks,
        Connectors,
        Deploys,
        Extops,
        FileSystems,
        InteractionRuns,
        Interactions,
        Keys,
        KnowledgeBases,
        Namespaces,
        Schedules,
        Secrets,
        Triggers,
        Usage,
        Webhooks,
    )


class Maitento(SyncAPIClient):
    """The Maitento API client. `api_url` and `api_key` default to `MT_API_URL` and `MT_API_KEY`; one
    httpx client is kept for every call (close it with `close()` or `with Maitento() as mt:`). Connection
    errors, 408, 429 and 5xx are retried `max_retries` times; `timeout` is the time limit of one try (s)."""

    def __init__(
        self,
        api_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        http_client: httpx.Client | None = None,
    ) -> None:
        super().__init__(api_url, api_key, timeout=timeout, max_retries=max_retries, http_client=http_client)
        # The resources (and the models they validate with, pydantic's) load with the first client, not at import.
        from .resources import (
            Agents,
            Approvals,
            Audit,
            AuthProviders,
            Connections,
            Connectors,
            Deploys,
            Extops,
            FileSystems,
            InteractionRuns,
            Interactions,
            Keys,
            KnowledgeBases,
            Namespaces,
            Schedules,
            Secrets,
            Triggers,
            Usage,
            Webhooks,
        )

        self.connectors: Connectors = Connectors(self)
        self.extops = Extops(self)
        self.agents = Agents(self)
        self.interactions = Interactions(self)
        self.interaction_runs = InteractionRuns(self)
        self.approvals = Approvals(self)
        self.secrets = Secrets(self)
        self.keys = Keys(self)
        self.namespaces = Namespaces(self)
        self.deploy = Deploys(self)
        self.knowledge_bases = KnowledgeBases(self)
        self.file_systems = FileSystems(self)
        self.audit = Audit(self)
        self.usage = Usage(self)
        self.webhooks = Webhooks(self)
        self.auth_providers = AuthProviders(self)
        self.connections = Connections(self)
        self.schedules = Schedules(self)
        self.triggers = Triggers(self)

    def __enter__(self) -> Maitento:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


class AsyncMaitento(AsyncAPIClient):
    """The Maitento API client for asyncio: the same resources as `Maitento`, awaited
    (`async with AsyncMaitento() as mt:`)."""

    def __init__(
        self,
        api_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(api_url, api_key, timeout=timeout, max_retries=max_retries, http_client=http_client)
        from .resources import (
            AsyncAgents,
            AsyncApprovals,
            AsyncAudit,
            AsyncAuthProviders,
            AsyncConnections,
            AsyncConnectors,
            AsyncDeploys,
            AsyncExtops,
            AsyncFileSystems,
            AsyncInteractionRuns,
            AsyncInteractions,
            AsyncKeys,
            AsyncKnowledgeBases,
            AsyncNamespaces,
            AsyncSchedules,
            AsyncSecrets,
            AsyncTriggers,
            AsyncUsage,
            AsyncWebhooks,
        )

        self.connectors: AsyncConnectors = AsyncConnectors(self)
        self.extops = AsyncExtops(self)
        self.agents = AsyncAgents(self)
        self.interactions = AsyncInteractions(self)
        self.interaction_runs = AsyncInteractionRuns(self)
        self.approvals = AsyncApprovals(self)
        self.secrets = AsyncSecrets(self)
        self.keys = AsyncKeys(self)
        self.namespaces = AsyncNamespaces(self)
        self.deploy = AsyncDeploys(self)
        self.knowledge_bases = AsyncKnowledgeBases(self)
        self.file_systems = AsyncFileSystems(self)
        self.audit = AsyncAudit(self)
        self.usage = AsyncUsage(self)
        self.webhooks = AsyncWebhooks(self)
        self.auth_providers = AsyncAuthProviders(self)
        self.connections = AsyncConnections(self)
        self.schedules = AsyncSchedules(self)
        self.triggers = AsyncTriggers(self)

    async def __aenter__(self) -> AsyncMaitento:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()
