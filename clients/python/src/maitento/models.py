"""Pydantic models of the Maitento REST API, generated from its OpenAPI document: do not edit.

Regenerate with `python scripts/generate_models.py URL_OF/openapi.json`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class MaitentoModel(BaseModel):
    """Base of every model: Python names, the wire's camelCase as aliases, unknown fields kept. A model's
    validator is built on its first use, not at import."""

    model_config = ConfigDict(populate_by_name=True, extra="allow", defer_build=True)


class Diagnostic(MaitentoModel):
    """Diagnostic."""

    code: str
    severity: Literal["error", "warning"]
    message: str
    file: str
    line: int
    column: int
    end_line: int | None = Field(None, alias="endLine")
    end_column: int | None = Field(None, alias="endColumn")
    hint: str | None = Field(None)


class Error(MaitentoModel):
    """Every error: a message, a stable code, and for a refused deploy its diagnostics"""

    error: str
    code: str
    diagnostics: list[Diagnostic] | None = Field(None)


class ConnectorMcp(MaitentoModel):
    """ConnectorMcp."""

    url: str
    tool: str


class ConnectorParametersPathItem(MaitentoModel):
    """ConnectorParametersPathItem."""

    name: str
    description: str | None = Field(None)
    required: bool
    type: Literal["string", "number", "integer", "boolean"]


class ConnectorParametersQueryItem(MaitentoModel):
    """ConnectorParametersQueryItem."""

    name: str
    description: str | None = Field(None)
    required: bool
    type: Literal["string", "number", "integer", "boolean"]


class ConnectorParametersHeaderItem(MaitentoModel):
    """ConnectorParametersHeaderItem."""

    name: str
    description: str | None = Field(None)
    required: bool
    type: Literal["string", "number", "integer", "boolean"]


class ConnectorParameters(MaitentoModel):
    """ConnectorParameters."""

    path: list[ConnectorParametersPathItem]
    query: list[ConnectorParametersQueryItem]
    header: list[ConnectorParametersHeaderItem] | None = Field(None)


class ConnectorSchema(MaitentoModel):
    """ConnectorSchema."""

    request: Any = Field(None)
    response: Any = Field(None)


class Connector(MaitentoModel):
    """Connector."""

    kind: Literal["connector"]
    name: str
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
    url: str
    mcp: ConnectorMcp | None = Field(None)
    description: str
    parameters: ConnectorParameters
    schema_: ConnectorSchema = Field(alias="schema")
    auth: Literal["None", "Header", "Maitento"]


class ToolBindings(MaitentoModel):
    """ToolBindings."""

    request: dict[str, Any]
    query: dict[str, Any]
    path: dict[str, Any]


class ToolAuth(MaitentoModel):
    """ToolAuth."""

    header: str
    secret: str


class ToolApproval(MaitentoModel):
    """The tool's approval policy (docs/roles.md)"""

    approvers: list[str] | None = Field(None, description="Who may answer: key roles and/or API key ids")
    count: int | None = Field(None, description="How many distinct approvers are needed")
    exclude_starter: bool | None = Field(None, alias="excludeStarter", description="true: the key that started the run's tree may not answer")


class Tool(MaitentoModel):
    """Tool."""

    kind: Literal["tool"]
    name: str
    connector: str
    guidance: str
    bindings: ToolBindings
    auth: ToolAuth | None = Field(None)
    requires_approval: bool = Field(alias="requiresApproval")
    approval: ToolApproval | None = Field(None, description="The tool's approval policy (docs/roles.md)")


class ToolDefinition(MaitentoModel):
    """Exactly what a model is sent for the tool"""

    name: str
    description: str
    parameters: dict[str, Any]


class DeployPlanChangesItem(MaitentoModel):
    """DeployPlanChangesItem."""

    kind: Literal["connector", "tool", "agent", "interaction"]
    name: str
    action: Literal["create", "update", "unchanged"]
    version: int
    previous_version: int | None = Field(None, alias="previousVersion")
    changed: list[str] | None = Field(None)
    breaking: list[str]


class DeployPlan(MaitentoModel):
    """DeployPlan."""

    applied: bool
    changes: list[DeployPlanChangesItem]


class VersionState(MaitentoModel):
    """VersionState."""

    name: str
    version: int
    enabled: bool


class VersionSummary(MaitentoModel):
    """VersionSummary."""

    version: int
    enabled: bool
    created_at: str = Field(alias="createdAt")
    deployed_by: str | None = Field(alias="deployedBy", description="The id of the key that deployed this version (null for one deployed before schema 22)")


class Secret(MaitentoModel):
    """A secret by id and name; its value is never returned"""

    id: str
    name: str
    created_at: str = Field(alias="createdAt")
    updated_at: str = Field(alias="updatedAt")


class AgentFunctionsItemRef(MaitentoModel):
    """AgentFunctionsItemRef."""

    ref: str = Field(description="A tool the agent may call")


class AgentFunctionsItemAgent(MaitentoModel):
    """AgentFunctionsItemAgent."""

    agent: str = Field(description="An agent it may hand a task to (agents as tools)")


class Agent(MaitentoModel):
    """Agent."""

    kind: Literal["agent"]
    name: str
    model: str
    instructions: str
    summary: str | None = Field(None)
    functions: list[AgentFunctionsItemRef | AgentFunctionsItemAgent]


class InteractionAgent(MaitentoModel):
    """InteractionAgent."""

    name: str
    agent: str


class InteractionInputsPromptsItem(MaitentoModel):
    """InteractionInputsPromptsItem."""

    name: str
    description: str | None = Field(None)
    required: bool
    default: str | None = Field(None)


class InteractionInputsFunctionsBindingItem(MaitentoModel):
    """InteractionInputsFunctionsBindingItem."""

    name: str
    function: str
    agent: str | None = Field(None)
    target: str
    type: Literal["request", "query", "path"]
    required: bool
    default: Any = Field(None)
    description: str | None = Field(None)


class InteractionInputsFunctionsAuthItem(MaitentoModel):
    """InteractionInputsFunctionsAuthItem."""

    name: str
    function: str
    agent: str | None = Field(None)
    header: str
    required: bool
    secret: str | None = Field(None)
    description: str | None = Field(None)


class InteractionInputsFunctions(MaitentoModel):
    """InteractionInputsFunctions."""

    binding: list[InteractionInputsFunctionsBindingItem]
    auth: list[InteractionInputsFunctionsAuthItem]


class InteractionInputs(MaitentoModel):
    """InteractionInputs."""

    prompts: list[InteractionInputsPromptsItem]
    functions: InteractionInputsFunctions


class InteractionFunctionsOpenApiItem(MaitentoModel):
    """InteractionFunctionsOpenApiItem."""

    name: str | None = Field(None)
    ref: str


class InteractionFunctions(MaitentoModel):
    """InteractionFunctions."""

    open_api: list[InteractionFunctionsOpenApiItem] = Field(alias="openApi")


class InteractionResult(MaitentoModel):
    """The final answer's shape: a JSON Schema of an object (absent: the answer is text)"""

    schema_: Any = Field(alias="schema")


class InteractionConversation(MaitentoModel):
    """A conversation: after each reply the run waits for the next message, at most maxIdleSeconds"""

    max_idle_seconds: int = Field(alias="maxIdleSeconds")


class Interaction(MaitentoModel):
    """Interaction."""

    kind: Literal["interaction"]
    name: str
    agent: InteractionAgent
    task: str
    inputs: InteractionInputs
    functions: InteractionFunctions
    result: InteractionResult | None = Field(None, description="The final answer's shape: a JSON Schema of an object (absent: the answer is text)")
    conversation: InteractionConversation | None = Field(None, description="A conversation: after each reply the run waits for the next message, at most maxIdleSeconds")


class InteractionInput(MaitentoModel):
    """One input a run gives: a prompt (fills %%name%%), a binding (written into a tool call) or an auth input (a secret id)"""

    name: str
    kind: Literal["prompt", "binding", "auth"]
    required: bool
    description: str | None = Field(None)
    default: Any = Field(None)
    function: str | None = Field(None)
    agent: str | None = Field(None)
    target: str | None = Field(None)
    type: Literal["request", "query", "path"] | None = Field(None)
    header: str | None = Field(None)
    secret: str | None = Field(None)


class ToolPin(MaitentoModel):
    """ToolPin."""

    name: str
    version: int


class Actor(MaitentoModel):
    """The API key that answered: its id and name"""

    key_id: str = Field(alias="keyId")
    key_name: str = Field(alias="keyName")


class Approval(MaitentoModel):
    """One call waiting for a person, as it is shown (never a secret)"""

    id: str
    run_id: str | None = Field(alias="runId", description="The run that waits on it; null for an approval made outside a run")
    function_name: str = Field(alias="functionName")
    arguments_json: str = Field(alias="argumentsJson", description="JSON text: the model's arguments and the run inputs written into the call")
    status: Literal["Pending", "Approved", "Rejected", "Expired"]
    agent_name: str | None = Field(alias="agentName")
    reason: str | None = Field(description="The reason given with a rejection")
    answered_by: Actor | None = Field(alias="answeredBy")
    approved_by: list[Actor] | None = Field(None, alias="approvedBy", description="The distinct keys that approved so far, in order (a tool whose policy needs more than one approval stays Pending until enough did)")
    answered_at: str | None = Field(alias="answeredAt")
    expires_at: str | None = Field(alias="expiresAt")
    created_at: str = Field(alias="createdAt")


class RunInteraction(MaitentoModel):
    """RunInteraction."""

    name: str
    version: int


class RunError(MaitentoModel):
    """RunError."""

    code: str
    message: str


class RunVersionsItem(MaitentoModel):
    """RunVersionsItem."""

    kind: Literal["connector", "tool", "agent", "interaction"]
    name: str
    version: int


class Run(MaitentoModel):
    """A run of an interaction"""

    id: str
    interaction: RunInteraction
    status: Literal["Running", "PendingApproval", "WaitingForInput", "Completed", "Failed", "Cancelled"]
    interactive: bool = Field(description="False for an app run: nobody can be asked to approve")
    inputs: dict[str, Any] = Field(description="The inputs as given (secret inputs are secret ids, never values); a secret input whose secret the calling key may not use is {\"secret\": true}")
    result: str | dict[str, Any] | None = Field(description="The final answer of a Completed run: its text, or the object matching the interaction's result.schema when it declares one")
    error: RunError | None
    pending_approval: Approval | None = Field(alias="pendingApproval", description="The approval the run waits on while PendingApproval; a parent waiting on a child run shows the child's (its runId the child's, its agentName the agent that asks)")
    parent_run_id: str | None = Field(alias="parentRunId", description="The run whose tool call started this one (an agent handed a task); null at the top")
    agent: str | None = Field(description="The agent a child run plays; null for a run of the interaction's own agent")
    versions: list[RunVersionsItem] = Field(description="Every version the run uses, pinned when it started")
    created_at: str = Field(alias="createdAt")
    updated_at: str = Field(alias="updatedAt")


class RunSummaryInteraction(MaitentoModel):
    """RunSummaryInteraction."""

    name: str
    version: int


class RunSummaryError(MaitentoModel):
    """RunSummaryError."""

    code: str
    message: str


class RunSummary(MaitentoModel):
    """A run in a list: no inputs or versions, its result cut to 200 characters (GET /v1/runs/{id} has all)"""

    id: str
    interaction: RunSummaryInteraction
    status: Literal["Running", "PendingApproval", "WaitingForInput", "Completed", "Failed", "Cancelled"]
    interactive: bool = Field(description="False for an app run: nobody can be asked to approve")
    result: str | None = Field(description="The first 200 characters of the final answer of a Completed run")
    result_truncated: bool = Field(alias="resultTruncated", description="True when the result is longer than the summary in result")
    error: RunSummaryError | None
    pending_approval_id: str | None = Field(alias="pendingApprovalId", description="The approval the run waits on while PendingApproval (a child run's, for a parent waiting on it)")
    parent_run_id: str | None = Field(alias="parentRunId", description="The run whose tool call started this one (an agent handed a task); null at the top")
    agent: str | None = Field(description="The agent a child run plays; null for a run of the interaction's own agent")
    created_at: str = Field(alias="createdAt")
    updated_at: str = Field(alias="updatedAt")


class RunEvent(MaitentoModel):
    """One stored step of a run; seq counts from 1 and is the SSE event id"""

    seq: int
    type: Literal["run-started", "model-response", "tool-call-started", "tool-result", "approval-requested", "approval-answered", "run-waiting", "result-invalid", "input-requested", "user-message", "history-trimmed", "conversation-ended", "run-completed", "run-failed", "run-cancelled"]
    at: str
    data: dict[str, Any]


class ResourceSummary(MaitentoModel):
    """ResourceSummary."""

    name: str
    latest_version: int = Field(alias="latestVersion")
    enabled: bool


class ExtopSummary(MaitentoModel):
    """ExtopSummary."""

    name: str
    latest_version: int = Field(alias="latestVersion")
    enabled: bool
    callable: bool = Field(description="False while the latest version or its pinned connector version is disabled")
    reason: str | None = Field(None, description="Why the tool cannot be called")


class ConnectorRecord(MaitentoModel):
    """ConnectorRecord."""

    name: str
    version: int
    enabled: bool
    created_at: str = Field(alias="createdAt")
    hash: str
    resource: Connector


class ExtopRecordConnector(MaitentoModel):
    """ExtopRecordConnector."""

    name: str
    version: int


class ExtopRecord(MaitentoModel):
    """ExtopRecord."""

    name: str
    version: int
    enabled: bool
    created_at: str = Field(alias="createdAt")
    hash: str
    connector: ExtopRecordConnector
    resource: Tool
    definition: ToolDefinition | None = Field(None)


class AgentRecord(MaitentoModel):
    """AgentRecord."""

    name: str
    version: int
    enabled: bool
    created_at: str = Field(alias="createdAt")
    hash: str
    model: str
    summary: str | None = Field(None)
    instructions: str
    tools: list[ToolPin]
    resource: Agent


class InteractionRecordAgent(MaitentoModel):
    """The agent as the interaction names it, the agent resource and its pinned version"""

    name: str
    agent: str
    version: int


class InteractionRecord(MaitentoModel):
    """InteractionRecord."""

    name: str
    version: int
    enabled: bool
    created_at: str = Field(alias="createdAt")
    hash: str
    agent: InteractionRecordAgent = Field(description="The agent as the interaction names it, the agent resource and its pinned version")
    task: str
    inputs: list[InteractionInput]
    tools: list[ToolPin] = Field(description="Every tool a run may call: the agent's own and the interaction's functions.openApi")
    resource: Interaction


class RunPage(MaitentoModel):
    """RunPage."""

    runs: list[RunSummary]
    next_cursor: str | None = Field(alias="nextCursor")


class KeyInfo(MaitentoModel):
    """KeyInfo."""

    id: str
    name: str | None
    role: Literal["admin", "user", "runner", "approver"]
    secrets: list[str] = Field(description="The ids of the secrets granted to the key when it was made: a user key names only these in a run (an admin key any)")
    created_at: str = Field(alias="createdAt")


class CreatedKey(MaitentoModel):
    """CreatedKey."""

    id: str
    name: str | None
    role: Literal["admin", "user", "runner", "approver"]
    secrets: list[str] = Field(description="The ids of the secrets granted to the key when it was made: a user key names only these in a run (an admin key any)")
    created_at: str = Field(alias="createdAt")
    key: str


class CreatedNamespaceKey(MaitentoModel):
    """CreatedNamespaceKey."""

    id: str
    key: str
    role: Literal["admin"]


class CreatedNamespace(MaitentoModel):
    """CreatedNamespace."""

    name: str
    key: CreatedNamespaceKey


class ExtopCallResultTruncated(MaitentoModel):
    """Set when the body was cut at `limit` bytes; `size` is the whole size when declared"""

    limit: int
    size: int | None = Field(None)


class ExtopCallResult(MaitentoModel):
    """ExtopCallResult."""

    ok: bool
    status: int | None = Field(None)
    body: Any = Field(None)
    truncated: ExtopCallResultTruncated | None = Field(None, description="Set when the body was cut at `limit` bytes; `size` is the whole size when declared")
    error: str | None = Field(None)
    code: str | None = Field(None)


class SecretKeyStatus(MaitentoModel):
    """SecretKeyStatus."""

    current_key_id: str = Field(alias="currentKeyId", description="The master key new secrets are wrapped under (MT_SECRET_KEY)")
    secrets_by_key_id: dict[str, int] = Field(alias="secretsByKeyId", description="How many secrets each master key id holds")
    unused_previous_key_ids: list[str] = Field(alias="unusedPreviousKeyIds", description="Keys of MT_SECRET_KEY_PREVIOUS no secret is under any more: they can be retired")


class SecretKeyRotation(MaitentoModel):
    """SecretKeyRotation."""

    key_id: str = Field(alias="keyId", description="The master key every data key is now wrapped under")
    rewrapped: int = Field(description="Data keys re-wrapped by this call (values untouched)")
    converted: int = Field(description="Secrets stored before envelope encryption, converted by this call")
    batches: int = Field(description="Batches committed")
    status: SecretKeyStatus


class FileSystem(MaitentoModel):
    """A file system of the namespace: files by path"""

    id: str = Field(description="What a run binds (fileSystemId) and every file path is under")
    name: str
    description: str
    files: int = Field(description="How many files it holds")
    bytes: int = Field(description="The sum of its files' sizes")
    created_at: str = Field(alias="createdAt")


class FileInfo(MaitentoModel):
    """A file, without its content"""

    path: str = Field(description="Normalised, relative to the file system (notes/today.md)")
    size: int = Field(description="In bytes")
    content_type: str = Field(alias="contentType", description="The Content-Type it was written with")
    etag: str = Field(description="A strong ETag (quoted), for If-Match")
    created_at: str = Field(alias="createdAt")
    updated_at: str = Field(alias="updatedAt")


class FilePage(MaitentoModel):
    """One page of files in byte order of their paths"""

    files: list[FileInfo]
    next_cursor: str | None = Field(alias="nextCursor")


class AuditEntryActor(MaitentoModel):
    """AuditEntryActor."""

    kind: Literal["key", "system"]
    id: str = Field(description="The key id, or `system`")
    role: str | None = Field(description="The key's role then (null for the system)")
    via: str = Field(description="api, console, migrate, runs-prune or retention")


class AuditEntryTarget(MaitentoModel):
    """AuditEntryTarget."""

    kind: str
    id: str


class AuditEntry(MaitentoModel):
    """AuditEntry."""

    id: str = Field(description="The row's place in the log: a later row has a greater id (a decimal number)")
    at: str
    namespace: str
    actor: AuditEntryActor
    action: str = Field(description="A dotted name: key.created, secret.rotated, deploy.applied, ...")
    target: AuditEntryTarget
    before: dict[str, Any] | None = Field(description="Names, ids, roles, versions and states: never a secret value, a key or a request body")
    after: dict[str, Any] | None = Field(description="Names, ids, roles, versions and states: never a secret value, a key or a request body")
    request_id: str | None = Field(alias="requestId", description="The X-Request-Id of the change")


class AuditPage(MaitentoModel):
    """AuditPage."""

    entries: list[AuditEntry]
    next_cursor: str | None = Field(alias="nextCursor")


class KnowledgeBase(MaitentoModel):
    """KnowledgeBase."""

    id: str
    name: str
    description: str
    language: str = Field(description="The PostgreSQL text search configuration (english by default)")
    document_count: int = Field(alias="documentCount")
    chunk_count: int = Field(alias="chunkCount")
    created_at: str = Field(alias="createdAt")


class KnowledgeDocument(MaitentoModel):
    """KnowledgeDocument."""

    id: str
    name: str
    content_type: str = Field(alias="contentType")
    bytes: int
    chunk_count: int = Field(alias="chunkCount")
    status: Literal["embedding", "ready"]
    created_at: str = Field(alias="createdAt")


class KnowledgeSearchResultDocument(MaitentoModel):
    """KnowledgeSearchResultDocument."""

    id: str
    name: str


class KnowledgeSearchResult(MaitentoModel):
    """KnowledgeSearchResult."""

    text: str
    score: float = Field(description="Higher is better; comparable only within one search")
    title: str = Field(description="The headings the passage is under (for a PDF, its page)")
    position: int = Field(description="The passage's place in its document, from 0")
    document: KnowledgeSearchResultDocument


class KnowledgeSearch(MaitentoModel):
    """KnowledgeSearch."""

    results: list[KnowledgeSearchResult]


class RotateSecretKeyBody(MaitentoModel):
    """RotateSecretKeyBody."""

    batch_size: int | None = Field(None, alias="batchSize")


class ApproveApprovalBody(MaitentoModel):
    """ApproveApprovalBody."""

    reason: str | None = Field(None, description="Why: the model is told it")


class RejectApprovalBody(MaitentoModel):
    """RejectApprovalBody."""

    reason: str = Field(description="Why: the model is told it")


class DeployBodyFilesItem(MaitentoModel):
    """DeployBodyFilesItem."""

    path: str
    content: str


class DeployBody(MaitentoModel):
    """DeployBody."""

    files: list[DeployBodyFilesItem]
    dry_run: bool | None = Field(None, alias="dryRun")


class CallExtopBody(MaitentoModel):
    """CallExtopBody."""

    arguments: dict[str, Any]
    version: int | None = Field(None)


class CreateFileSystemBody(MaitentoModel):
    """CreateFileSystemBody."""

    name: str
    description: str | None = Field(None)


class WriteFileBody(MaitentoModel):
    """WriteFileBody."""

    path: str = Field(description="The file's path, relative to the file system")
    content: str = Field(description="The text of the file (stored as UTF-8)")
    content_type: str | None = Field(None, alias="contentType", description="Default text/plain; charset=utf-8")
    if_match: str | None = Field(None, alias="ifMatch", description="Write only over the file at this ETag (* : any)")


class MoveFileBody(MaitentoModel):
    """MoveFileBody."""

    from_: str = Field(alias="from")
    to: str
    overwrite: bool | None = Field(None, description="Replace a file already at `to` (default false: 409)")


class StartRunBody(MaitentoModel):
    """StartRunBody."""

    inputs: dict[str, Any] | None = Field(None, description="Prompt, binding and auth inputs by name (auth inputs are secret ids)")
    interactive: bool | None = Field(None, description="Default true; false is an app run with nobody to ask")
    version: int | None = Field(None)


class CreateKeyBody(MaitentoModel):
    """CreateKeyBody."""

    name: str | None = Field(None)
    role: Literal["admin", "user", "runner", "approver"]
    secrets: list[str] | None = Field(None, description="Ids of secrets of the namespace the key may name in a run (inputs.functions.auth); a user key may name no other. An admin key uses every secret.")


class CreateKnowledgeBaseBody(MaitentoModel):
    """CreateKnowledgeBaseBody."""

    name: str
    description: str | None = Field(None)
    language: str | None = Field(None, description="A PostgreSQL text search configuration: english (the default), french, german, simple, ...")


class SearchKnowledgeBody(MaitentoModel):
    """SearchKnowledgeBody."""

    partition_id: str = Field(alias="partitionId", description="The id of the knowledge base")
    query: str = Field(description="A question or a few words; \"quoted\" phrases rank higher")
    limit: int | None = Field(None, description="At most this many passages (default 5)")


class SearchKnowledgeBaseBody(MaitentoModel):
    """SearchKnowledgeBaseBody."""

    query: str = Field(description="A question or a few words; \"quoted\" phrases rank higher")
    limit: int | None = Field(None, description="At most this many passages (default 5)")


class CreateNamespaceBody(MaitentoModel):
    """CreateNamespaceBody."""

    name: str


class ApproveRunBody(MaitentoModel):
    """ApproveRunBody."""

    approval_id: str | None = Field(None, alias="approvalId", description="Default: the one the run waits on")
    reason: str | None = Field(None, description="Why: the model is told it")


class CancelRunBody(MaitentoModel):
    """CancelRunBody."""

    pass


class SendRunMessageBody(MaitentoModel):
    """SendRunMessageBody."""

    text: str = Field(description="The message (not empty); the run must be WaitingForInput")


class RejectRunBody(MaitentoModel):
    """RejectRunBody."""

    approval_id: str | None = Field(None, alias="approvalId", description="Default: the one the run waits on")
    reason: str = Field(description="Why: the model is told it")


class CreateSecretBody(MaitentoModel):
    """CreateSecretBody."""

    name: str
    value: str


class RotateSecretBody(MaitentoModel):
    """RotateSecretBody."""

    value: str


__all__ = [
    "MaitentoModel",
    "Actor",
    "Agent",
    "AgentFunctionsItemAgent",
    "AgentFunctionsItemRef",
    "AgentRecord",
    "Approval",
    "ApproveApprovalBody",
    "ApproveRunBody",
    "AuditEntry",
    "AuditEntryActor",
    "AuditEntryTarget",
    "AuditPage",
    "CallExtopBody",
    "CancelRunBody",
    "Connector",
    "ConnectorMcp",
    "ConnectorParameters",
    "ConnectorParametersHeaderItem",
    "ConnectorParametersPathItem",
    "ConnectorParametersQueryItem",
    "ConnectorRecord",
    "ConnectorSchema",
    "CreateFileSystemBody",
    "CreateKeyBody",
    "CreateKnowledgeBaseBody",
    "CreateNamespaceBody",
    "CreateSecretBody",
    "CreatedKey",
    "CreatedNamespace",
    "CreatedNamespaceKey",
    "DeployBody",
    "DeployBodyFilesItem",
    "DeployPlan",
    "DeployPlanChangesItem",
    "Diagnostic",
    "Error",
    "ExtopCallResult",
    "ExtopCallResultTruncated",
    "ExtopRecord",
    "ExtopRecordConnector",
    "ExtopSummary",
    "FileInfo",
    "FilePage",
    "FileSystem",
    "Interaction",
    "InteractionAgent",
    "InteractionConversation",
    "InteractionFunctions",
    "InteractionFunctionsOpenApiItem",
    "InteractionInput",
    "InteractionInputs",
    "InteractionInputsFunctions",
    "InteractionInputsFunctionsAuthItem",
    "InteractionInputsFunctionsBindingItem",
    "InteractionInputsPromptsItem",
    "InteractionRecord",
    "InteractionRecordAgent",
    "InteractionResult",
    "KeyInfo",
    "KnowledgeBase",
    "KnowledgeDocument",
    "KnowledgeSearch",
    "KnowledgeSearchResult",
    "KnowledgeSearchResultDocument",
    "MoveFileBody",
    "RejectApprovalBody",
    "RejectRunBody",
    "ResourceSummary",
    "RotateSecretBody",
    "RotateSecretKeyBody",
    "Run",
    "RunError",
    "RunEvent",
    "RunInteraction",
    "RunPage",
    "RunSummary",
    "RunSummaryError",
    "RunSummaryInteraction",
    "RunVersionsItem",
    "SearchKnowledgeBaseBody",
    "SearchKnowledgeBody",
    "Secret",
    "SecretKeyRotation",
    "SecretKeyStatus",
    "SendRunMessageBody",
    "StartRunBody",
    "Tool",
    "ToolApproval",
    "ToolAuth",
    "ToolBindings",
    "ToolDefinition",
    "ToolPin",
    "VersionState",
    "VersionSummary",
    "WriteFileBody",
]
