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
    ConnectorRecord,
    CreatedKey,
    CreatedNamespace,
    DeployPlan,
    ExtopCallResult,
    ExtopRecord,
    ExtopSummary,
    InteractionRecord,
    KeyInfo,
    ResourceSummary,
    Secret,
    SecretKeyRotation,
    SecretKeyStatus,
    VersionState,
    VersionSummary,
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
        self, name: str, *, arguments: dict[str, Any], version: int | None = None, idempotency_key: str | None = None
    ) -> ExtopCallResult:
        """Makes one call of the tool through the server's gateway with the namespace's secrets."""
        body = without_none({"arguments": arguments, "version": version})
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

    def approve(self, approval_id: str, *, reason: str | None = None) -> Approval:
        """Approves: exactly the call shown is made (`api:approvals:already-answered` if it was answered)."""
        route = path("/v1/approvals/{}/approve", approval_id)
        return Approval.model_validate(self._client.request("POST", route, without_none({"reason": reason})))

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


class Deploys(_Resource):
    """`mt.deploy`: deploys a config repo (or plans it, with `dry_run`)."""

    def create(self, *, files: builtins.list[dict[str, str]], dry_run: bool | None = None) -> DeployPlan:
        """Deploys the files (`{"path", "content"}`); a repo with errors raises `UnprocessableEntityError`."""
        body = without_none({"files": files, "dryRun": dry_run})
        return DeployPlan.model_validate(self._client.request("POST", "/v1/deploy", body))

    def folder(self, folder: str | Path, *, dry_run: bool = False) -> DeployPlan:
        """Deploys the config repo in `folder` as `mt deploy` does (`dry_run=True`: only the plan)."""
        return self.create(files=read_config_repo(folder), dry_run=dry_run)


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
