"""The resources of `Maitento` but the runs (see runs.py): each is a namespace of the client (`mt.connectors`)."""

from __future__ import annotations

import builtins

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._base import path, with_query, without_none
from .._repo import read_config_repo
from ..models import (
    AgentRecord,
    Approval,
    AuditPage,
    AuthProviderRecord,
    ConnectLink,
    Connection,
    ConnectorRecord,
    CreatedKey,
    CreatedNamespace,
    DeployPlan,
    ExtopCallResult,
    ExtopRecord,
    ExtopSummary,
    InteractionRecord,
    KeyInfo,
    QuotaStanding,
    ResourceSummary,
    ScheduleState,
    ScheduleTick,
    Secret,
    SecretKeyRotation,
    SecretKeyStatus,
    TriggerDeliveryLog,
    UsageReport,
    VersionState,
    VersionSummary,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEndpointWithSecret,
)

if TYPE_CHECKING:
    from .._client import SyncAPIClient

# The gateway may wait 100 s for an upstream: a call by hand is given that and some room.
CALL_TIMEOUT = 110.0


class _Resource:
    def __init__(self, client: SyncAPIClient) -> None:
        self._client = client


def _record(kind: str, name: str, version: int | None) -> str:
    if version is None:
        return path(f"/v1/{kind}/{{}}", name)
    return path(f"/v1/{kind}/{{}}/versions/{{}}", name, version)


class Connectors(_Resource):
    """`mt.connectors`: the deployed HTTP endpoints and their versions."""

    def list(self) -> builtins.list[ResourceSummary]:
        """Every connector of the namespace with its latest version."""
        return [ResourceSummary.model_validate(x) for x in self._client.request("GET", "/v1/connectors")]

    def get(self, name: str, *, version: int | None = None) -> ConnectorRecord:
        """The latest version of a connector, or the version named."""
        return ConnectorRecord.model_validate(self._client.request("GET", _record("connectors", name, version)))

    def versions(self, name: str) -> builtins.list[VersionSummary]:
        """Every stored version of a connector."""
        data = self._client.request("GET", path("/v1/connectors/{}/versions", name))
        return [VersionSummary.model_validate(x) for x in data]

    def disable_version(self, name: str, version: int) -> VersionState:
        """Disables one version: every call pinned to it fails until it is enabled again."""
        data = self._client.request("POST", path("/v1/connectors/{}/versions/{}/disable", name, version))
        return VersionState.model_validate(data)

    def enable_version(self, name: str, version: int) -> VersionState:
        """Enables one version again."""
        data = self._client.request("POST", path("/v1/connectors/{}/versions/{}/enable", name, version))
        return VersionState.model_validate(data)


class Extops(_Resource):
    """`mt.extops`: the deployed tools (external operations), their versions, and one call by hand."""

    def list(self) -> builtins.list[ExtopSummary]:
        """Every tool of the namespace with its latest version and whether it can be called."""
        return [ExtopSummary.model_validate(x) for x in self._client.request("GET", "/v1/extops")]

    def get(self, name: str, *, version: int | None = None) -> ExtopRecord:
        """The latest version of a tool (or the version named) with its model-facing definition."""
        return ExtopRecord.model_validate(self._client.request("GET", _record("extops", name, version)))

    def versions(self, name: str) -> builtins.list[VersionSummary]:
        """Every stored version of a tool."""
        data = self._client.request("GET", path("/v1/extops/{}/versions", name))
        return [VersionSummary.model_validate(x) for x in data]

    def disable_version(self, name: str, version: int) -> VersionState:
        """Disables one version: every call pinned to it fails until it is enabled again."""
        data = self._client.request("POST", path("/v1/extops/{}/versions/{}/disable", name, version))
        return VersionState.model_validate(data)

    def enable_version(self, name: str, version: int) -> VersionState:
        """Enables one version again."""
        data = self._client.request("POST", path("/v1/extops/{}/versions/{}/enable", name, version))
        return VersionState.model_validate(data)

    def call(
        self,
        name: str,
        *,
        arguments: dict[str, Any],
        version: int | None = None,
        end_user: str | None = None,
        idempotency_key: str | None = None,
    ) -> ExtopCallResult:
        """Makes one call of the tool through the server's gateway with the namespace's secrets.

        `end_user` is the person an auth = "OAuth2" connector's call acts for (their connection's access token). When
        they have no usable connection the call is refused: a `ConflictError` with code
        `api:connections:authorization-required` whose `details["authorization"]["url"]` is their connect link.
        """
        body = without_none({"arguments": arguments, "version": version, "endUser": end_user})
        timeout = max(self._client.timeout, CALL_TIMEOUT)
        data = self._client.request(
            "POST", path("/v1/extops/{}/call", name), body, idempotency_key=idempotency_key, timeout=timeout
        )
        return ExtopCallResult.model_validate(data)


class Agents(_Resource):
    """`mt.agents`: the deployed agents (model, instructions, tools) and their versions."""

    def list(self) -> builtins.list[ResourceSummary]:
        """Every agent of the namespace with its latest version."""
        return [ResourceSummary.model_validate(x) for x in self._client.request("GET", "/v1/agents")]

    def get(self, name: str, *, version: int | None = None) -> AgentRecord:
        """The latest version of an agent, or the version named."""
        return AgentRecord.model_validate(self._client.request("GET", _record("agents", name, version)))

    def versions(self, name: str) -> builtins.list[VersionSummary]:
        """Every stored version of an agent, newest first."""
        data = self._client.request("GET", path("/v1/agents/{}/versions", name))
        return [VersionSummary.model_validate(x) for x in data]


class Interactions(_Resource):
    """`mt.interactions`: the deployed interactions, their inputs and versions. Runs are `mt.interaction_runs`."""

    def list(self) -> builtins.list[ResourceSummary]:
        """Every interaction of the namespace with its latest version."""
        return [ResourceSummary.model_validate(x) for x in self._client.request("GET", "/v1/interactions")]

    def get(self, name: str, *, version: int | None = None) -> InteractionRecord:
        """The latest version of an interaction (or the version named), with its inputs, agent and tools."""
        return InteractionRecord.model_validate(self._client.request("GET", _record("interactions", name, version)))

    def versions(self, name: str) -> builtins.list[VersionSummary]:
        """Every stored version of an interaction, newest first."""
        data = self._client.request("GET", path("/v1/interactions/{}/versions", name))
        return [VersionSummary.model_validate(x) for x in data]


ApprovalStatus = Literal["Pending", "Approved", "Rejected", "Expired"]


class Approvals(_Resource):
    """`mt.approvals`: calls waiting for a person, in a run or not; each is answered once."""

    def list(
        self, *, status: ApprovalStatus | None = None, run_id: str | None = None, limit: int | None = None
    ) -> builtins.list[Approval]:
        """The namespace's approvals, newest first: the pending ones unless `status` says otherwise."""
        route = with_query("/v1/approvals", {"status": status, "runId": run_id, "limit": limit})
        return [Approval.model_validate(x) for x in self._client.request("GET", route)]

    def get(self, approval_id: str) -> Approval:
        """One approval."""
        return Approval.model_validate(self._client.request("GET", path("/v1/approvals/{}", approval_id)))

    def approve(
        self,
        approval_id: str,
        *,
        reason: str | None = None,
        arguments: dict[str, Any] | None = None,
        request_hash: str | None = None,
    ) -> Approval:
        """Approves: exactly the call shown is made (`api:approvals:already-answered` if it was answered).

        With `arguments` (and the `request_hash` of the approval you read), edit, then approve: a run's call is made
        with these arguments instead of the model's (docs/roles.md, "Edit, then approve").
        """
        route = path("/v1/approvals/{}/approve", approval_id)
        body = without_none({"reason": reason, "arguments": arguments, "requestHash": request_hash})
        return Approval.model_validate(self._client.request("POST", route, body))

    def reject(self, approval_id: str, *, reason: str) -> Approval:
        """Rejects with a reason; the call is not made."""
        route = path("/v1/approvals/{}/reject", approval_id)
        return Approval.model_validate(self._client.request("POST", route, {"reason": reason}))


class Secrets(_Resource):
    """`mt.secrets`: values tools send as credentials; the API never returns a value."""

    def create(self, *, name: str, value: str) -> Secret:
        """Stores a new secret."""
        return Secret.model_validate(self._client.request("POST", "/v1/secrets", {"name": name, "value": value}))

    def list(self) -> builtins.list[Secret]:
        """Every secret of the namespace, by id and name."""
        return [Secret.model_validate(x) for x in self._client.request("GET", "/v1/secrets")]

    def rotate(self, secret_id: str, *, value: str) -> Secret:
        """Replaces the value of the secret with id `secret_id`."""
        data = self._client.request("PUT", path("/v1/secrets/{}", secret_id), {"value": value})
        return Secret.model_validate(data)

    def delete(self, secret_id: str) -> None:
        """Deletes the secret with id `secret_id`."""
        self._client.request("DELETE", path("/v1/secrets/{}", secret_id))

    def key_status(self) -> SecretKeyStatus:
        """Which master key ids the secrets are under (operator: an admin key of `default`)."""
        return SecretKeyStatus.model_validate(self._client.request("GET", "/v1/admin/secret-key"))

    def rotate_master_key(self, *, batch_size: int | None = None) -> SecretKeyRotation:
        """Re-wraps every secret's data key under the server's current master key (operator)."""
        body = without_none({"batchSize": batch_size})
        return SecretKeyRotation.model_validate(self._client.request("POST", "/v1/admin/secret-key/rotate", body))


class Keys(_Resource):
    """`mt.keys`: the API keys of the namespace."""

    def create(
        self, *, role: str, name: str | None = None, secrets: builtins.list[str] | None = None
    ) -> CreatedKey:
        """Creates a key; the answer's `key` is shown this once. `secrets`: the secret ids a user key may name in a run."""
        body = without_none({"role": role, "name": name, "secrets": secrets})
        return CreatedKey.model_validate(self._client.request("POST", "/v1/keys", body))

    def list(self) -> builtins.list[KeyInfo]:
        """Every key of the namespace, without the keys themselves."""
        return [KeyInfo.model_validate(x) for x in self._client.request("GET", "/v1/keys")]

    def delete(self, key_id: str) -> None:
        """Deletes (revokes) the key with id `key_id`."""
        self._client.request("DELETE", path("/v1/keys/{}", key_id))


class Namespaces(_Resource):
    """`mt.namespaces`: creating namespaces (operator keys only)."""

    def create(self, *, name: str) -> CreatedNamespace:
        """Creates a namespace and its first admin key, shown this once."""
        return CreatedNamespace.model_validate(self._client.request("POST", "/v1/namespaces", {"name": name}))

    def set_quotas(
        self,
        name: str,
        *,
        runs_per_day: int | None = None,
        tool_calls_per_day: int | None = None,
        tokens_per_month: int | None = None,
    ) -> QuotaStanding:
        """Sets every quota of namespace `name` (one left as None is no quota; docs/quotas.md)."""
        body = {"runsPerDay": runs_per_day, "toolCallsPerDay": tool_calls_per_day, "tokensPerMonth": tokens_per_month}
        return QuotaStanding.model_validate(self._client.request("PUT", path("/v1/namespaces/{}/quotas", name), body))

    def get_quotas(self, name: str) -> QuotaStanding:
        """The quotas of namespace `name` and what it used of them this UTC day and month."""
        return QuotaStanding.model_validate(self._client.request("GET", path("/v1/namespaces/{}/quotas", name)))


class Deploys(_Resource):
    """`mt.deploy`: deploys a config repo (or plans it, with `dry_run`)."""

    def create(
        self, *, files: builtins.list[dict[str, str]], dry_run: bool | None = None, end_user: str | None = None
    ) -> DeployPlan:
        """Deploys the files (`{"path", "content"}`); a repo with errors raises `UnprocessableEntityError`.

        `end_user` names the person whose connection lists the OAuth2 MCP connectors' servers (their tools' schemas).
        """
        body = without_none({"files": files, "dryRun": dry_run, "endUser": end_user})
        return DeployPlan.model_validate(self._client.request("POST", "/v1/deploy", body))

    def folder(self, folder: str | Path, *, dry_run: bool = False, end_user: str | None = None) -> DeployPlan:
        """Deploys the config repo in `folder` as `mt deploy` does (`dry_run=True`: only the plan)."""
        return self.create(files=read_config_repo(folder), dry_run=dry_run, end_user=end_user)


class Audit(_Resource):
    """`mt.audit`: the audit log of the namespace (an admin key): who changed what, when (docs/audit.md)."""

    def list(
        self,
        *,
        actor: str | None = None,
        action: str | None = None,
        target: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> AuditPage:
        """One page of the audit log, newest first; pass `next_cursor` back as `cursor` for the next one.
        `action` may be an action's first part (`secret`: every secret action); `since`/`until` are ISO 8601."""
        query = {
            "actor": actor,
            "action": action,
            "target": target,
            "since": since,
            "until": until,
            "limit": limit,
            "cursor": cursor,
        }
        return AuditPage.model_validate(self._client.request("GET", with_query("/v1/audit", query)))

    def export_jsonl(
        self,
        *,
        actor: str | None = None,
        action: str | None = None,
        target: str | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> str:
        """Every matching row as JSON Lines (oldest first, one JSON object a line), as the server exports it."""
        query = {"actor": actor, "action": action, "target": target, "since": since, "until": until}
        response = self._client.send("GET", with_query("/v1/audit/export", query), headers={"accept": "application/jsonl"})
        return response.text


class Usage(_Resource):
    """`mt.usage`: what the runs of the namespace spent (an admin key; docs/runs.md, Usage and budgets)."""

    def get(
        self,
        *,
        since: str | None = None,
        until: str | None = None,
        by: Literal["namespace", "interaction", "key", "tool"] | None = None,
    ) -> UsageReport:
        """Runs, tool calls, tokens and cost of the runs created in [since, until) (ISO 8601), for the namespace or
        by interaction, key or tool."""
        query = {"since": since, "until": until, "by": by}
        return UsageReport.model_validate(self._client.request("GET", with_query("/v1/usage", query)))

    def quotas(self) -> QuotaStanding:
        """The namespace's quotas (None: none) and what it used of them this UTC day and month."""
        return QuotaStanding.model_validate(self._client.request("GET", "/v1/quotas"))


class Webhooks(_Resource):
    """`mt.webhooks`: the namespace's outbound webhook endpoints (an admin key; docs/notifications.md). Each delivery
    is signed per Standard Webhooks with the endpoint's secret, answered only by `create` and `rotate_secret`."""

    def create(
        self,
        *,
        url: str,
        events: builtins.list[str] | None = None,
        description: str | None = None,
        enabled: bool | None = None,
    ) -> WebhookEndpointWithSecret:
        """Adds an endpoint for `events` (none: every event); the answer's `secret` is shown this once."""
        body = without_none({"url": url, "events": events, "description": description, "enabled": enabled})
        return WebhookEndpointWithSecret.model_validate(self._client.request("POST", "/v1/webhooks", body))

    def list(self) -> builtins.list[WebhookEndpoint]:
        """Every endpoint of the namespace (never a secret)."""
        return [WebhookEndpoint.model_validate(x) for x in self._client.request("GET", "/v1/webhooks")]

    def get(self, endpoint_id: str) -> WebhookEndpoint:
        """One endpoint."""
        return WebhookEndpoint.model_validate(self._client.request("GET", path("/v1/webhooks/{}", endpoint_id)))

    def update(
        self,
        endpoint_id: str,
        *,
        url: str | None = None,
        events: builtins.list[str] | None = None,
        description: str | None = None,
        enabled: bool | None = None,
    ) -> WebhookEndpoint:
        """Changes what is given: URL, events, description, enabled."""
        body = without_none({"url": url, "events": events, "description": description, "enabled": enabled})
        data = self._client.request("PUT", path("/v1/webhooks/{}", endpoint_id), body)
        return WebhookEndpoint.model_validate(data)

    def delete(self, endpoint_id: str) -> None:
        """Deletes an endpoint and its delivery log."""
        self._client.request("DELETE", path("/v1/webhooks/{}", endpoint_id))

    def rotate_secret(self, endpoint_id: str, *, grace_seconds: int | None = None) -> WebhookEndpointWithSecret:
        """A new signing secret; the old one signs too for `grace_seconds` (default a day; 0: not at all)."""
        body = without_none({"graceSeconds": grace_seconds})
        data = self._client.request("POST", path("/v1/webhooks/{}/rotate-secret", endpoint_id), body)
        return WebhookEndpointWithSecret.model_validate(data)

    def test(self, endpoint_id: str) -> WebhookDelivery:
        """Sends a `webhook.test` event to the endpoint; returns its delivery, pending."""
        return WebhookDelivery.model_validate(self._client.request("POST", path("/v1/webhooks/{}/test", endpoint_id)))

    def deliveries(
        self, endpoint_id: str, *, status: str | None = None, limit: int | None = None
    ) -> builtins.list[WebhookDelivery]:
        """The endpoint's delivery log, newest first."""
        route = with_query(path("/v1/webhooks/{}/deliveries", endpoint_id), {"status": status, "limit": limit})
        return [WebhookDelivery.model_validate(x) for x in self._client.request("GET", route)]


class AuthProviders(_Resource):
    """`mt.auth_providers`: the deployed OAuth 2 authorization servers end users connect at, and their versions."""

    def list(self) -> builtins.list[ResourceSummary]:
        """Every auth provider of the namespace with its latest version."""
        return [ResourceSummary.model_validate(x) for x in self._client.request("GET", "/v1/auth-providers")]

    def get(self, name: str, *, version: int | None = None) -> AuthProviderRecord:
        """The latest version of an auth provider, or the version named."""
        return AuthProviderRecord.model_validate(self._client.request("GET", _record("auth-providers", name, version)))

    def versions(self, name: str) -> builtins.list[VersionSummary]:
        """Every stored version of an auth provider."""
        data = self._client.request("GET", path("/v1/auth-providers/{}/versions", name))
        return [VersionSummary.model_validate(x) for x in data]

    def disable_version(self, name: str, version: int) -> VersionState:
        """Disables one version: no connect link is made with it until it is enabled again."""
        data = self._client.request("POST", path("/v1/auth-providers/{}/versions/{}/disable", name, version))
        return VersionState.model_validate(data)

    def enable_version(self, name: str, version: int) -> VersionState:
        """Enables one version again."""
        data = self._client.request("POST", path("/v1/auth-providers/{}/versions/{}/enable", name, version))
        return VersionState.model_validate(data)


class Connections(_Resource):
    """`mt.connections`: end users' OAuth 2 connections at auth providers, and the links that make them (never a
    token; docs/connections.md)."""

    def create_link(
        self,
        *,
        provider: str,
        end_user: str,
        scopes: builtins.list[str] | None = None,
        return_url: str | None = None,
    ) -> ConnectLink:
        """A connect link for an end user: the provider's authorization URL to hand them, usable once before
        `expires_at`. When they come back, the server stores the connection."""
        body = without_none({"provider": provider, "endUser": end_user, "scopes": scopes, "returnUrl": return_url})
        return ConnectLink.model_validate(self._client.request("POST", "/v1/connections/links", body))

    def list(self, *, provider: str | None = None, end_user: str | None = None) -> builtins.list[Connection]:
        """The connections of the namespace, optionally of one provider and/or one end user."""
        route = with_query("/v1/connections", {"provider": provider, "endUser": end_user})
        return [Connection.model_validate(x) for x in self._client.request("GET", route)]

    def get(self, connection_id: str) -> Connection:
        """One connection by id."""
        return Connection.model_validate(self._client.request("GET", path("/v1/connections/{}", connection_id)))

    def delete(self, connection_id: str) -> Connection:
        """Deletes a connection and its tokens; returns the connection deleted."""
        return Connection.model_validate(self._client.request("DELETE", path("/v1/connections/{}", connection_id)))


class Schedules(_Resource):
    """`mt.schedules`: the deployed schedules with their last and next ticks, pause and resume, and their history
    (docs/schedules-and-triggers.md)."""

    def list(self) -> builtins.list[ScheduleState]:
        """Every schedule of the namespace (its latest enabled version) with its last and next ticks."""
        return [ScheduleState.model_validate(x) for x in self._client.request("GET", "/v1/schedules")]

    def get(self, name: str) -> ScheduleState:
        """One schedule as it stands."""
        return ScheduleState.model_validate(self._client.request("GET", path("/v1/schedules/{}", name)))

    def pause(self, name: str, *, reason: str | None = None) -> ScheduleState:
        """Pauses a schedule in every process: no tick starts a run until it is resumed (an admin key)."""
        data = self._client.request("POST", path("/v1/schedules/{}/pause", name), without_none({"reason": reason}))
        return ScheduleState.model_validate(data)

    def resume(self, name: str, *, reason: str | None = None) -> ScheduleState:
        """Resumes a schedule: the ticks while it was paused are not made up for (an admin key)."""
        data = self._client.request("POST", path("/v1/schedules/{}/resume", name), without_none({"reason": reason}))
        return ScheduleState.model_validate(data)

    def ticks(self, name: str, *, limit: int | None = None) -> builtins.list[ScheduleTick]:
        """The latest ticks of a schedule, newest first (at most `limit`, default 50), and what became of each."""
        route = with_query(path("/v1/schedules/{}/ticks", name), {"limit": limit})
        return [ScheduleTick.model_validate(x) for x in self._client.request("GET", route)]


class Triggers(_Resource):
    """`mt.triggers`: the inbound webhooks' delivery logs (docs/schedules-and-triggers.md)."""

    def deliveries(self, name: str, *, limit: int | None = None) -> TriggerDeliveryLog:
        """A trigger's latest deliveries (newest first, at most `limit`, default 50): the run each started or why
        it was refused; and the deliveries refused before anything was stored, counted by reason."""
        route = with_query(path("/v1/triggers/{}/deliveries", name), {"limit": limit})
        return TriggerDeliveryLog.model_validate(self._client.request("GET", route))
