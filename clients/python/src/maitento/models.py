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


class ErrorAuthorization(MaitentoModel):
    """With api:connections:authorization-required from a direct tool call: the end user's connect link; they open it, then the call is made again"""

    provider: str = Field(description="The auth provider the end user connects at")
    end_user: str = Field(alias="endUser")
    reason: str = Field(description="What the connection lacks: not connected, missing scopes: ...")
    scopes: list[str]
    url: str = Field(description="The connect link to hand the end user (opened once, before expiresAt)")
    expires_at: str = Field(alias="expiresAt")


class Error(MaitentoModel):
    """Every error: a message, a stable code, for a refused deploy its diagnostics, and for a direct tool call whose end user must connect their connect link"""

    error: str
    code: str
    diagnostics: list[Diagnostic] | None = Field(None)
    authorization: ErrorAuthorization | None = Field(None, description="With api:connections:authorization-required from a direct tool call: the end user's connect link; they open it, then the call is made again")


class AuthProvider(MaitentoModel):
    """AuthProvider."""

    kind: Literal["auth-provider"]
    name: str
    issuer: str | None = Field(None, description="The issuer identifier; endpoints come from its metadata (RFC 8414, OIDC Discovery)")
    authorization_url: str | None = Field(None, alias="authorizationUrl", description="The authorization endpoint, when no issuer is given")
    token_url: str | None = Field(None, alias="tokenUrl", description="The token endpoint, when no issuer is given")
    resource: str | None = Field(None, description="A protected resource (a remote MCP server's URL): the issuer is the first authorization server its metadata names (RFC 9728)")
    client_id: str | None = Field(None, alias="clientId", description="The client id registered at the provider; absent when the client is registered dynamically (RFC 7591) at its issuer")
    client_secret: str | None = Field(None, alias="clientSecret", description="The client secret's name (a secret of the namespace)")
    token_auth_method: Literal["client_secret_basic", "client_secret_post", "none"] = Field(alias="tokenAuthMethod")
    scopes: list[str] = Field(description="The scopes every connection asks for")
    authorization_params: dict[str, str] = Field(alias="authorizationParams", description="Extra parameters of the authorization request (such as access_type = \"offline\")")
    refresh: bool = Field(description="Whether access tokens are refreshed with the refresh token")


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


class ConnectorLimitPerKey(MaitentoModel):
    """The same counts for each API key apart: the key of a REST or MCP call, or the key that started the run"""

    calls: int | None = Field(None, description="Calls admitted in any window of `per`")
    per: str | None = Field(None, description="The window of `calls`: \"5s\", \"1m\", \"1h\"")
    in_flight: int | None = Field(None, alias="inFlight", description="Calls in flight at once")


class ConnectorLimitPerEndUser(MaitentoModel):
    """The same counts for each end user apart (a run or an MCP call that names one)"""

    calls: int | None = Field(None, description="Calls admitted in any window of `per`")
    per: str | None = Field(None, description="The window of `calls`: \"5s\", \"1m\", \"1h\"")
    in_flight: int | None = Field(None, alias="inFlight", description="Calls in flight at once")


class ConnectorLimit(MaitentoModel):
    """A limit on the calls to the connector's origin by every tool that uses a connector with this origin and a limit, across every process (docs/limits.md)"""

    calls: int | None = Field(None, description="Calls admitted in any window of `per`")
    per: str | None = Field(None, description="The window of `calls`: \"5s\", \"1m\", \"1h\"")
    in_flight: int | None = Field(None, alias="inFlight", description="Calls in flight at once")
    per_key: ConnectorLimitPerKey | None = Field(None, alias="perKey", description="The same counts for each API key apart: the key of a REST or MCP call, or the key that started the run")
    per_end_user: ConnectorLimitPerEndUser | None = Field(None, alias="perEndUser", description="The same counts for each end user apart (a run or an MCP call that names one)")
    on_limit: Literal["wait", "fail"] | None = Field(None, alias="onLimit", description="Inside a run: \"wait\" (default) until the window opens, or \"fail\" the tool call")


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
    auth: Literal["None", "Header", "Maitento", "OAuth2"]
    provider: str | None = Field(None, description="With auth OAuth2: the auth provider whose connection of the run's end user is used")
    grant: Literal["authorization_code", "client_credentials"] | None = Field(None, description="With auth OAuth2: authorization_code (the run's end user's connection, the default) or client_credentials (the provider's own token)")
    scopes: list[str] | None = Field(None, description="With auth OAuth2: the scopes the connector needs, besides the provider's")
    limit: ConnectorLimit | None = Field(None, description="A limit on the calls to the connector's origin by every tool that uses a connector with this origin and a limit, across every process (docs/limits.md)")


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

    approvers: list[str] | None = Field(None, description="Who may answer: key roles, API key ids and/or people (person:<id>)")
    count: int | None = Field(None, description="How many distinct approvers are needed")
    exclude_starter: bool | None = Field(None, alias="excludeStarter", description="true: the key that started the run's tree may not answer")


class ToolLimitPerKey(MaitentoModel):
    """The same counts for each API key apart: the key of a REST or MCP call, or the key that started the run"""

    calls: int | None = Field(None, description="Calls admitted in any window of `per`")
    per: str | None = Field(None, description="The window of `calls`: \"5s\", \"1m\", \"1h\"")
    in_flight: int | None = Field(None, alias="inFlight", description="Calls in flight at once")


class ToolLimitPerEndUser(MaitentoModel):
    """The same counts for each end user apart (a run or an MCP call that names one)"""

    calls: int | None = Field(None, description="Calls admitted in any window of `per`")
    per: str | None = Field(None, description="The window of `calls`: \"5s\", \"1m\", \"1h\"")
    in_flight: int | None = Field(None, alias="inFlight", description="Calls in flight at once")


class ToolLimit(MaitentoModel):
    """The tool's rate limit and concurrency cap, across every process (docs/limits.md)"""

    calls: int | None = Field(None, description="Calls admitted in any window of `per`")
    per: str | None = Field(None, description="The window of `calls`: \"5s\", \"1m\", \"1h\"")
    in_flight: int | None = Field(None, alias="inFlight", description="Calls in flight at once")
    per_key: ToolLimitPerKey | None = Field(None, alias="perKey", description="The same counts for each API key apart: the key of a REST or MCP call, or the key that started the run")
    per_end_user: ToolLimitPerEndUser | None = Field(None, alias="perEndUser", description="The same counts for each end user apart (a run or an MCP call that names one)")
    on_limit: Literal["wait", "fail"] | None = Field(None, alias="onLimit", description="Inside a run: \"wait\" (default) until the window opens, or \"fail\" the tool call")


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
    limit: ToolLimit | None = Field(None, description="The tool's rate limit and concurrency cap, across every process (docs/limits.md)")


class ToolDefinition(MaitentoModel):
    """Exactly what a model is sent for the tool"""

    name: str
    description: str
    parameters: dict[str, Any]


class DeployPlanChangesItem(MaitentoModel):
    """DeployPlanChangesItem."""

    kind: Literal["auth-provider", "connector", "tool", "agent", "interaction", "schedule", "trigger"]
    name: str
    action: Literal["create", "update", "unchanged", "delete"]
    version: int
    previous_version: int | None = Field(None, alias="previousVersion")
    changed: list[str] | None = Field(None)
    breaking: list[str]
    pinned_by: list[str] | None = Field(None, alias="pinnedBy", description="A delete only: the runs not yet ended that pin versions of it (their ids); those versions stay enabled until the runs end, the rest are disabled")


class DeployPlanAbsentItem(MaitentoModel):
    """DeployPlanAbsentItem."""

    kind: Literal["auth-provider", "connector", "tool", "agent", "interaction", "schedule", "trigger"]
    name: str
    version: int = Field(description="Its latest version")


class DeployPlan(MaitentoModel):
    """DeployPlan."""

    applied: bool
    changes: list[DeployPlanChangesItem]
    absent: list[DeployPlanAbsentItem] | None = Field(None, description="Without prune (present only when there is one): the resources of the namespace the repo does not hold, left as they are; a deploy with prune would delete them")
    warnings: list[Diagnostic] | None = Field(None, description="What the deploy did not refuse but a run may trip on (present only when there is one): the compiler's warnings, and an agent whose model names a provider this server has no key for (api:deploy:model-not-configured)")


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


class InteractionBudget(MaitentoModel):
    """What each run may spend (docs/runs.md, Usage and budgets): once it reaches it, the run waits for a person to extend it (PendingBudget) or fails, as onExceeded says"""

    tokens: int | None = Field(None, description="The most input + output tokens a run may spend")
    cost_usd: float | None = Field(None, alias="costUsd", description="The most a run may spend in US dollars")
    on_exceeded: Literal["wait", "fail"] = Field(alias="onExceeded")


class InteractionLimitPerKey(MaitentoModel):
    """Starts admitted for each API key apart, in any window of `per`, across every server"""

    calls: int = Field(description="Starts admitted in any window of `per`")
    per: str = Field(description="The window of `calls`: \"5s\", \"1m\", \"1h\"")


class InteractionLimitPerEndUser(MaitentoModel):
    """Starts admitted for each end user apart (a start naming one), across every server"""

    calls: int = Field(description="Starts admitted in any window of `per`")
    per: str = Field(description="The window of `calls`: \"5s\", \"1m\", \"1h\"")


class InteractionLimit(MaitentoModel):
    """A limit on starting runs (docs/limits.md, A key's limit on starting runs): over it a start answers 429 api:limits:exceeded; schedules and triggers are not counted"""

    per_key: InteractionLimitPerKey | None = Field(None, alias="perKey", description="Starts admitted for each API key apart, in any window of `per`, across every server")
    per_end_user: InteractionLimitPerEndUser | None = Field(None, alias="perEndUser", description="Starts admitted for each end user apart (a start naming one), across every server")


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
    budget: InteractionBudget | None = Field(None, description="What each run may spend (docs/runs.md, Usage and budgets): once it reaches it, the run waits for a person to extend it (PendingBudget) or fails, as onExceeded says")
    limit: InteractionLimit | None = Field(None, description="A limit on starting runs (docs/limits.md, A key's limit on starting runs): over it a start answers 429 api:limits:exceeded; schedules and triggers are not counted")
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
    """The API key or person that answered: its id and name"""

    key_id: str = Field(alias="keyId", description="The key id, or `person:<id>` for a person signed in through single sign-on")
    key_name: str = Field(alias="keyName", description="The key's name, or the person's name (and email)")


class ApprovalEdited(MaitentoModel):
    """Set when a person changed the arguments the model chose (edit, then approve): the key that last edited them"""

    by: Actor


class Approval(MaitentoModel):
    """One call waiting for a person, as it is shown (never a secret)"""

    id: str
    run_id: str | None = Field(alias="runId", description="The run that waits on it; null for an approval made outside a run")
    function_name: str = Field(alias="functionName")
    arguments_json: str = Field(alias="argumentsJson", description="JSON text: the model's arguments (or those a person set by editing) and the run inputs written into the call")
    request_hash: str = Field(alias="requestHash", description="The hash of the exact request shown (method, URL, headers but the credential, body, identity); an edit sends it back, so a stale view approves nothing")
    edited: ApprovalEdited | None = Field(description="Set when a person changed the arguments the model chose (edit, then approve): the key that last edited them")
    status: Literal["Pending", "Approved", "Rejected", "Expired"]
    agent_name: str | None = Field(alias="agentName")
    reason: str | None = Field(description="The reason given with a rejection")
    answered_by: Actor | None = Field(alias="answeredBy")
    approved_by: list[Actor] | None = Field(None, alias="approvedBy", description="The distinct keys that approved so far, in order (a tool whose policy needs more than one approval stays Pending until enough did)")
    answered_at: str | None = Field(alias="answeredAt")
    expires_at: str | None = Field(alias="expiresAt")
    created_at: str = Field(alias="createdAt")


class RunUsage(MaitentoModel):
    """What a run's model turns spent so far (docs/runs.md, Usage and budgets)"""

    input_tokens: int = Field(alias="inputTokens", description="Input tokens of all its model turns, as the providers reported them")
    output_tokens: int = Field(alias="outputTokens", description="Output tokens of all its model turns")
    cost_usd: float = Field(alias="costUsd", description="Their cost in US dollars by the price table (MT_MODEL_PRICES); 0 for a model it has no price for")


class RunBudget(MaitentoModel):
    """What a run may spend: its interaction's budget, or the one it was started with"""

    tokens: int | None = Field(description="The most input + output tokens its model turns may spend; null: no limit")
    cost_usd: float | None = Field(alias="costUsd", description="The most they may cost in US dollars; null: no limit")
    on_exceeded: Literal["wait", "fail"] = Field(alias="onExceeded", description="When the next model turn would pass it: wait for a person to extend it (PendingBudget) or fail with api:runs:budget-exceeded")


class RunInteraction(MaitentoModel):
    """RunInteraction."""

    name: str
    version: int


class RunError(MaitentoModel):
    """RunError."""

    code: str
    message: str


class RunPendingAuthorization(MaitentoModel):
    """While PendingAuthorization: the call that waits for its end user to connect, and the connect link for them"""

    tool_call_id: str = Field(alias="toolCallId")
    provider: str = Field(description="The auth provider the end user connects at")
    end_user: str = Field(alias="endUser")
    scopes: list[str]
    reason: str = Field(description="What the connection lacks: not connected, missing scopes: ...")
    url: str = Field(description="The connect link to hand the end user (opened once, before linkExpiresAt)")
    link_expires_at: str = Field(alias="linkExpiresAt")


class RunWaiting(MaitentoModel):
    """While PendingLimit: the call waits for the window of its limit to open (docs/limits.md); the run holds no worker and goes on at `until`"""

    reason: Literal["rate-limit"]
    until: str
    limit: str = Field(description="The policy name of the limit, as the RateLimit fields name it: tool-<name>, origin, tool-<name>-key...")
    description: str = Field(description="The limit in words: \"2 calls per 3s\"")
    tool: str = Field(description="The tool whose call waits")
    tool_call_id: str = Field(alias="toolCallId")


class RunOrigin(MaitentoModel):
    """What started the run when no request did: a schedule's tick, an inbound webhook's delivery, or (runId, status) the end of another run a chaining trigger follows; absent for a run a request started"""

    kind: Literal["schedule", "trigger"]
    name: str = Field(description="The schedule or trigger")
    version: int = Field(description="Its version that started the run")
    tick: str | None = Field(None)
    event_id: str | None = Field(None, alias="eventId", description="The delivery's event id (a trigger's)")
    run_id: str | None = Field(None, alias="runId")
    status: Literal["Completed", "Failed"] | None = Field(None)


class RunVersionsItem(MaitentoModel):
    """RunVersionsItem."""

    kind: Literal["auth-provider", "connector", "tool", "agent", "interaction", "schedule", "trigger"]
    name: str
    version: int


class Run(MaitentoModel):
    """A run of an interaction"""

    id: str
    interaction: RunInteraction
    status: Literal["Running", "PendingApproval", "PendingAuthorization", "PendingBudget", "PendingLimit", "WaitingForInput", "Completed", "Failed", "Cancelled"]
    interactive: bool = Field(description="False for an app run: nobody can be asked to approve")
    inputs: dict[str, Any] = Field(description="The inputs as given (secret inputs are secret ids, never values); a secret input whose secret the calling key may not use is {\"secret\": true}")
    result: str | dict[str, Any] | None = Field(description="The final answer of a Completed run: its text, or the object matching the interaction's result.schema when it declares one")
    error: RunError | None
    pending_approval: Approval | None = Field(alias="pendingApproval", description="The approval the run waits on while PendingApproval; a parent waiting on a child run shows the child's (its runId the child's, its agentName the agent that asks)")
    pending_authorization: RunPendingAuthorization | None = Field(None, alias="pendingAuthorization", description="While PendingAuthorization: the call that waits for its end user to connect, and the connect link for them")
    waiting: RunWaiting | None = Field(None, description="While PendingLimit: the call waits for the window of its limit to open (docs/limits.md); the run holds no worker and goes on at `until`")
    parent_run_id: str | None = Field(alias="parentRunId", description="The run whose tool call started this one (an agent handed a task); null at the top")
    agent: str | None = Field(description="The agent a child run plays; null for a run of the interaction's own agent")
    end_user: str | None = Field(None, alias="endUser", description="The end user the run acts for (its OAuth2 connectors use their connections)")
    origin: RunOrigin | None = Field(None, description="What started the run when no request did: a schedule's tick, an inbound webhook's delivery, or (runId, status) the end of another run a chaining trigger follows; absent for a run a request started")
    versions: list[RunVersionsItem] = Field(description="Every version the run uses, pinned when it started")
    usage: RunUsage
    budget: RunBudget | None = Field(description="What the run may spend; null: no budget")
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
    status: Literal["Running", "PendingApproval", "PendingAuthorization", "PendingBudget", "PendingLimit", "WaitingForInput", "Completed", "Failed", "Cancelled"]
    interactive: bool = Field(description="False for an app run: nobody can be asked to approve")
    result: str | None = Field(description="The first 200 characters of the final answer of a Completed run")
    result_truncated: bool = Field(alias="resultTruncated", description="True when the result is longer than the summary in result")
    error: RunSummaryError | None
    pending_approval_id: str | None = Field(alias="pendingApprovalId", description="The approval the run waits on while PendingApproval (a child run's, for a parent waiting on it)")
    parent_run_id: str | None = Field(alias="parentRunId", description="The run whose tool call started this one (an agent handed a task); null at the top")
    agent: str | None = Field(description="The agent a child run plays; null for a run of the interaction's own agent")
    usage: RunUsage
    created_at: str = Field(alias="createdAt")
    updated_at: str = Field(alias="updatedAt")


class RunEvent(MaitentoModel):
    """One stored step of a run; seq counts from 1 and is the SSE event id"""

    seq: int
    type: Literal["run-started", "model-response", "tool-call-started", "tool-result", "approval-requested", "approval-answered", "run-waiting", "authorization-requested", "authorization-completed", "result-invalid", "input-requested", "user-message", "budget-exceeded", "budget-extended", "limit-waiting", "limit-wait-over", "history-trimmed", "conversation-ended", "run-completed", "run-failed", "run-cancelled"]
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


class AuthProviderRecord(MaitentoModel):
    """AuthProviderRecord."""

    name: str
    version: int
    enabled: bool
    created_at: str = Field(alias="createdAt")
    hash: str
    resource: AuthProvider


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
    secrets_by_key_id: dict[str, int] = Field(alias="secretsByKeyId", description="How many sealed values (secrets, connection tokens and connect links) each master key id holds")
    unused_previous_key_ids: list[str] = Field(alias="unusedPreviousKeyIds", description="Keys of MT_SECRET_KEY_PREVIOUS no sealed value is under any more: they can be retired")


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


class Connection(MaitentoModel):
    """One end user's authorisation at one auth provider (never its tokens)"""

    id: str
    provider: str = Field(description="The auth provider (auth-providers/<name>.mtr)")
    end_user: str = Field(alias="endUser", description="Your application's id of the person (any text of 1 to 256 characters): who the connection acts for")
    status: Literal["Active", "NeedsReauthorization"]
    scopes: list[str] = Field(description="The scopes the provider granted")
    has_refresh_token: bool = Field(alias="hasRefreshToken", description="Whether the provider gave a refresh token")
    access_token_expires_at: str | None = Field(alias="accessTokenExpiresAt", description="When the access token expires, as the provider said (null: it did not say)")
    created_at: str = Field(alias="createdAt")
    updated_at: str = Field(alias="updatedAt")


class ConnectLink(MaitentoModel):
    """The URL an end user opens to connect an account, once, before it expires"""

    id: str
    url: str = Field(description="The provider's authorization URL to hand the end user (single use)")
    provider: str
    end_user: str = Field(alias="endUser", description="Your application's id of the person (any text of 1 to 256 characters): who the connection acts for")
    scopes: list[str] = Field(description="The scopes asked for")
    expires_at: str = Field(alias="expiresAt")


class ScheduleState(MaitentoModel):
    """A schedule, whether it ticks, and its last and next ticks"""

    name: str
    version: int = Field(description="The latest version (the one that ticks)")
    interaction: str
    cron: str
    timezone: str
    overlap: Literal["skip", "queue-one", "allow"]
    missed: Literal["skip", "run-once"]
    enabled: bool = Field(description="As deployed: false in its file, or its version disabled")
    paused: bool = Field(description="Paused over the API (mt schedule-pause); resumed ticks start after the resume")
    last_tick: str | None = Field(alias="lastTick", description="The latest tick recorded, whatever became of it (null: none yet)")
    next_tick: str | None = Field(alias="nextTick", description="The next tick, when enabled and not paused (null otherwise)")


class ScheduleTick(MaitentoModel):
    """One tick of a schedule: started, queued, skipped, missed or failed"""

    tick: str
    version: int = Field(description="The version of the schedule the tick was taken by")
    status: Literal["started", "queued", "skipped", "missed", "failed"]
    run_id: str | None = Field(alias="runId", description="The run the tick started (null: none, or not yet for a queued tick)")
    detail: str | None = Field(description="Why it was skipped, missed or failed")
    recorded_at: str = Field(alias="recordedAt")


class HookAccepted(MaitentoModel):
    """The delivery was verified and its run started (it goes on in a worker)"""

    event_id: str = Field(alias="eventId", description="The delivery's event id (a replay of it answers this again)")
    status: Literal["started"]
    run_id: str = Field(alias="runId")


class TriggerDelivery(MaitentoModel):
    """One delivery of a trigger and what became of it: an inbound webhook's (its event id the sender's), or a chaining trigger's (its event id the ended run's id; pending until its run starts)"""

    event_id: str = Field(alias="eventId")
    version: int = Field(description="The version of the trigger that took it")
    status: Literal["pending", "started", "refused"]
    run_id: str | None = Field(alias="runId", description="The run it started (null when refused or pending)")
    detail: str | None = Field(description="Why it was refused")
    code: str | None = Field(None, description="The error code it was refused with (null unless refused)")
    answer_status: int | None = Field(alias="answerStatus", description="The HTTP status it was answered (and a replay is answered); null for a chaining trigger's (nobody asked)")
    received_at: str = Field(alias="receivedAt")


class TriggerDeliveryLog(MaitentoModel):
    """TriggerDeliveryLog."""

    deliveries: list[TriggerDelivery] = Field(description="The latest deliveries, newest first")
    rejected: dict[str, int] = Field(description="Deliveries refused before anything was stored, counted by reason (signature, timestamp, size)")


class AuditEntryActor(MaitentoModel):
    """AuditEntryActor."""

    kind: Literal["key", "person", "system"]
    id: str = Field(description="The key id, `person:<id>` for a person signed in through single sign-on, or `system`")
    role: str | None = Field(description="The key's or person's role then (null for the system)")
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


class UsageReportGroupsItem(MaitentoModel):
    """UsageReportGroupsItem."""

    key: str | None = Field(description="The namespace, interaction name, key id or tool name; null: runs no key started (schedules, triggers)")
    runs: int = Field(description="Runs created in the period (by tool: those that called it)")
    tool_calls: int = Field(alias="toolCalls", description="Tool calls with a stored result (not those a namespace quota refused: they were not made)")
    input_tokens: int = Field(alias="inputTokens", description="0 by tool")
    output_tokens: int = Field(alias="outputTokens", description="0 by tool")
    cost_usd: float = Field(alias="costUsd", description="By the price table (MT_MODEL_PRICES) the runs ran under")


class UsageReport(MaitentoModel):
    """What the runs of the namespace created in a period spent, grouped"""

    since: str | None = Field(description="The period asked for (null: from the first run)")
    until: str | None = Field(description="null: up to now")
    by: str = Field(description="namespace, interaction, key or tool")
    groups: list[UsageReportGroupsItem]


class QuotaStandingQuotas(MaitentoModel):
    """QuotaStandingQuotas."""

    runs_per_day: int | None = Field(alias="runsPerDay")
    tool_calls_per_day: int | None = Field(alias="toolCallsPerDay")
    tokens_per_month: int | None = Field(alias="tokensPerMonth")


class QuotaStandingUsed(MaitentoModel):
    """GET /v1/usage over the current UTC day (runs, tool calls) and month (tokens)"""

    runs_today: int = Field(alias="runsToday")
    tool_calls_today: int = Field(alias="toolCallsToday")
    tokens_this_month: int = Field(alias="tokensThisMonth")


class QuotaStanding(MaitentoModel):
    """A namespace's quotas and the figures they are held to now"""

    namespace: str
    quotas: QuotaStandingQuotas
    used: QuotaStandingUsed = Field(description="GET /v1/usage over the current UTC day (runs, tool calls) and month (tokens)")
    day_ends_at: str = Field(alias="dayEndsAt", description="When the UTC day ends (ISO 8601)")
    month_ends_at: str = Field(alias="monthEndsAt", description="When the UTC month ends (ISO 8601)")


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


class WebhookEndpoint(MaitentoModel):
    """An outbound webhook endpoint (never its signing secret)"""

    id: str
    url: str
    events: list[str] = Field(description="The event types it receives; empty: every type")
    description: str | None = Field(description="What it is for (shown in lists)")
    enabled: bool = Field(description="False: no event is written for it (a test event still is)")
    previous_secret_until: str | None = Field(alias="previousSecretUntil", description="Until when the previous secret signs every delivery too (a rotation's grace); null: none")
    created_at: str = Field(alias="createdAt")
    updated_at: str = Field(alias="updatedAt")


class WebhookEndpointWithSecret(MaitentoModel):
    """WebhookEndpointWithSecret."""

    endpoint: WebhookEndpoint
    secret: str = Field(description="The signing secret (whsec_ and base64), shown this once: give it to the receiver, which verifies each delivery with a Standard Webhooks library")


class WebhookDelivery(MaitentoModel):
    """WebhookDelivery."""

    id: str
    message_id: str = Field(alias="messageId", description="The webhook-id header of every attempt: msg_ and the id without dashes")
    endpoint_id: str = Field(alias="endpointId")
    event_type: str = Field(alias="eventType")
    status: Literal["Pending", "Delivered", "Failed"]
    attempts: int = Field(description="Attempts made so far")
    next_attempt_at: str | None = Field(alias="nextAttemptAt", description="When it is sent (again); null once Delivered or Failed")
    last_status: int | None = Field(alias="lastStatus", description="The HTTP status of the last attempt's answer (null: none came)")
    last_error: str | None = Field(alias="lastError", description="Why the last attempt failed")
    created_at: str = Field(alias="createdAt")
    delivered_at: str | None = Field(alias="deliveredAt")


class RotateSecretKeyBody(MaitentoModel):
    """RotateSecretKeyBody."""

    batch_size: int | None = Field(None, alias="batchSize")


class ApproveApprovalBody(MaitentoModel):
    """ApproveApprovalBody."""

    reason: str | None = Field(None, description="Why: the model is told it")
    arguments: dict[str, Any] | None = Field(None, description="Edit, then approve: the arguments the call is made with instead of the model's, shaped as the model's ({ \"request\": {...}, \"additionalInputs\": {...} }), without the values the tool or the run fixes")
    request_hash: str | None = Field(None, alias="requestHash", description="The approval's requestHash as the approver saw it; required with arguments")


class RejectApprovalBody(MaitentoModel):
    """RejectApprovalBody."""

    reason: str = Field(description="Why: the model is told it")


class CreateConnectLinkBody(MaitentoModel):
    """CreateConnectLinkBody."""

    provider: str = Field(description="The auth provider, by name")
    end_user: str = Field(alias="endUser", description="Your application's id of the person (any text of 1 to 256 characters): who the connection acts for")
    scopes: list[str] | None = Field(None, description="Scopes to ask for besides the provider's own")
    return_url: str | None = Field(None, alias="returnUrl", description="Where the callback sends the end user afterwards (http or https), with connection or error added")


class DeployBodyFilesItem(MaitentoModel):
    """DeployBodyFilesItem."""

    path: str
    content: str


class DeployBody(MaitentoModel):
    """DeployBody."""

    files: list[DeployBodyFilesItem]
    dry_run: bool | None = Field(None, alias="dryRun")
    prune: bool | None = Field(None, description="Delete the resources of the namespace the repo no longer holds, in the same transaction (each a delete change of the plan); without it they are listed in absent and left as they are")
    end_user: str | None = Field(None, alias="endUser", description="The end user whose connection lists the OAuth2 MCP connectors' servers, to read their tools' input schemas (used for the listing only)")


class CallExtopBody(MaitentoModel):
    """CallExtopBody."""

    arguments: dict[str, Any]
    version: int | None = Field(None)
    end_user: str | None = Field(None, alias="endUser", description="The end user the call acts for: an auth = \"OAuth2\" connector sends this person's connection's access token; without a usable connection the call is refused (409 api:connections:authorization-required) with their connect link")


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


class DeliverHookBody(MaitentoModel):
    """The sender's payload, a JSON document (verified over its bytes)"""

    pass


class StartRunBodyBudget(MaitentoModel):
    """What the run may spend, instead of its interaction's budget (docs/runs.md, Usage and budgets); tokens, costUsd or both"""

    tokens: int | None = Field(None, description="The most input + output tokens its model turns may spend")
    cost_usd: float | None = Field(None, alias="costUsd", description="The most they may cost in US dollars (at least 0.000001)")
    on_exceeded: Literal["wait", "fail"] | None = Field(None, alias="onExceeded", description="When it reaches the budget: wait for a person to extend it (PendingBudget) or fail (api:runs:budget-exceeded)")


class StartRunBody(MaitentoModel):
    """StartRunBody."""

    inputs: dict[str, Any] | None = Field(None, description="Prompt, binding and auth inputs by name (auth inputs are secret ids)")
    interactive: bool | None = Field(None, description="Default true; false is an app run with nobody to ask")
    version: int | None = Field(None)
    end_user: str | None = Field(None, alias="endUser", description="The end user the run acts for: its auth = \"OAuth2\" connectors send this person's connection's access token")
    budget: StartRunBodyBudget | None = Field(None, description="What the run may spend, instead of its interaction's budget (docs/runs.md, Usage and budgets); tokens, costUsd or both")


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


class SetNamespaceQuotasBody(MaitentoModel):
    """SetNamespaceQuotasBody."""

    runs_per_day: int | None = Field(None, alias="runsPerDay", description="Runs created in a UTC day; null or absent: no quota")
    tool_calls_per_day: int | None = Field(None, alias="toolCallsPerDay", description="Tool calls of the runs created in a UTC day; null or absent: no quota")
    tokens_per_month: int | None = Field(None, alias="tokensPerMonth", description="Model tokens (input + output) of the runs created in a UTC month; null or absent: no quota")


class ApproveRunBody(MaitentoModel):
    """ApproveRunBody."""

    approval_id: str | None = Field(None, alias="approvalId", description="Default: the one the run waits on")
    reason: str | None = Field(None, description="Why: the model is told it")
    arguments: dict[str, Any] | None = Field(None, description="Edit, then approve: the arguments the call is made with instead of the model's, shaped as the model's ({ \"request\": {...}, \"additionalInputs\": {...} }), without the values the tool or the run fixes")
    request_hash: str | None = Field(None, alias="requestHash", description="The approval's requestHash as the approver saw it; required with arguments")


class ExtendRunBudgetBody(MaitentoModel):
    """The new budget: each limit given replaces the old one, a limit not given stays; a limit must be above what the run spent"""

    tokens: int | None = Field(None, description="The most input + output tokens its model turns may spend")
    cost_usd: float | None = Field(None, alias="costUsd", description="The most they may cost in US dollars (at least 0.000001)")
    on_exceeded: Literal["wait", "fail"] | None = Field(None, alias="onExceeded", description="When it reaches the budget: wait for a person to extend it (PendingBudget) or fail (api:runs:budget-exceeded)")


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


class PauseScheduleBody(MaitentoModel):
    """PauseScheduleBody."""

    reason: str | None = Field(None, description="Why, kept in the audit log with the change")


class ResumeScheduleBody(MaitentoModel):
    """ResumeScheduleBody."""

    reason: str | None = Field(None, description="Why, kept in the audit log with the change")


class CreateSecretBody(MaitentoModel):
    """CreateSecretBody."""

    name: str
    value: str


class RotateSecretBody(MaitentoModel):
    """RotateSecretBody."""

    value: str


class CreateWebhookBody(MaitentoModel):
    """CreateWebhookBody."""

    url: str = Field(description="Where deliveries are POSTed: an http or https URL the egress rules allow (public addresses unless MT_EGRESS_ALLOW lets a private one through)")
    events: list[Literal["approval.requested", "approval.answered", "approval.expired", "run.waiting", "run.completed", "run.failed", "authorization.requested"]] | None = Field(None, description="The event types it receives; empty or absent: every type")
    description: str | None = Field(None, description="What it is for (shown in lists)")
    enabled: bool | None = Field(None, description="Default true")


class UpdateWebhookBody(MaitentoModel):
    """UpdateWebhookBody."""

    url: str | None = Field(None, description="Where deliveries are POSTed: an http or https URL the egress rules allow (public addresses unless MT_EGRESS_ALLOW lets a private one through)")
    events: list[Literal["approval.requested", "approval.answered", "approval.expired", "run.waiting", "run.completed", "run.failed", "authorization.requested"]] | None = Field(None, description="The event types it receives; empty or absent: every type")
    description: str | None = Field(None, description="What it is for (shown in lists)")
    enabled: bool | None = Field(None)


class RotateWebhookSecretBody(MaitentoModel):
    """RotateWebhookSecretBody."""

    grace_seconds: int | None = Field(None, alias="graceSeconds", description="How long the old secret signs every delivery too (a second signature), so receivers can switch: default 86400 (a day); 0 ends it now")


__all__ = [
    "MaitentoModel",
    "Actor",
    "Agent",
    "AgentFunctionsItemAgent",
    "AgentFunctionsItemRef",
    "AgentRecord",
    "Approval",
    "ApprovalEdited",
    "ApproveApprovalBody",
    "ApproveRunBody",
    "AuditEntry",
    "AuditEntryActor",
    "AuditEntryTarget",
    "AuditPage",
    "AuthProvider",
    "AuthProviderRecord",
    "CallExtopBody",
    "CancelRunBody",
    "ConnectLink",
    "Connection",
    "Connector",
    "ConnectorLimit",
    "ConnectorLimitPerEndUser",
    "ConnectorLimitPerKey",
    "ConnectorMcp",
    "ConnectorParameters",
    "ConnectorParametersHeaderItem",
    "ConnectorParametersPathItem",
    "ConnectorParametersQueryItem",
    "ConnectorRecord",
    "ConnectorSchema",
    "CreateConnectLinkBody",
    "CreateFileSystemBody",
    "CreateKeyBody",
    "CreateKnowledgeBaseBody",
    "CreateNamespaceBody",
    "CreateSecretBody",
    "CreateWebhookBody",
    "CreatedKey",
    "CreatedNamespace",
    "CreatedNamespaceKey",
    "DeliverHookBody",
    "DeployBody",
    "DeployBodyFilesItem",
    "DeployPlan",
    "DeployPlanAbsentItem",
    "DeployPlanChangesItem",
    "Diagnostic",
    "Error",
    "ErrorAuthorization",
    "ExtendRunBudgetBody",
    "ExtopCallResult",
    "ExtopCallResultTruncated",
    "ExtopRecord",
    "ExtopRecordConnector",
    "ExtopSummary",
    "FileInfo",
    "FilePage",
    "FileSystem",
    "HookAccepted",
    "Interaction",
    "InteractionAgent",
    "InteractionBudget",
    "InteractionConversation",
    "InteractionFunctions",
    "InteractionFunctionsOpenApiItem",
    "InteractionInput",
    "InteractionInputs",
    "InteractionInputsFunctions",
    "InteractionInputsFunctionsAuthItem",
    "InteractionInputsFunctionsBindingItem",
    "InteractionInputsPromptsItem",
    "InteractionLimit",
    "InteractionLimitPerEndUser",
    "InteractionLimitPerKey",
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
    "PauseScheduleBody",
    "QuotaStanding",
    "QuotaStandingQuotas",
    "QuotaStandingUsed",
    "RejectApprovalBody",
    "RejectRunBody",
    "ResourceSummary",
    "ResumeScheduleBody",
    "RotateSecretBody",
    "RotateSecretKeyBody",
    "RotateWebhookSecretBody",
    "Run",
    "RunBudget",
    "RunError",
    "RunEvent",
    "RunInteraction",
    "RunOrigin",
    "RunPage",
    "RunPendingAuthorization",
    "RunSummary",
    "RunSummaryError",
    "RunSummaryInteraction",
    "RunUsage",
    "RunVersionsItem",
    "RunWaiting",
    "ScheduleState",
    "ScheduleTick",
    "SearchKnowledgeBaseBody",
    "SearchKnowledgeBody",
    "Secret",
    "SecretKeyRotation",
    "SecretKeyStatus",
    "SendRunMessageBody",
    "SetNamespaceQuotasBody",
    "StartRunBody",
    "StartRunBodyBudget",
    "Tool",
    "ToolApproval",
    "ToolAuth",
    "ToolBindings",
    "ToolDefinition",
    "ToolLimit",
    "ToolLimitPerEndUser",
    "ToolLimitPerKey",
    "ToolPin",
    "TriggerDelivery",
    "TriggerDeliveryLog",
    "UpdateWebhookBody",
    "UsageReport",
    "UsageReportGroupsItem",
    "VersionState",
    "VersionSummary",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEndpointWithSecret",
    "WriteFileBody",
]
