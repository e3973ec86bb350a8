import { limitFromEnv } from '../internal/per-key-limit.js';

/** How the MCP endpoints wait, poll and expire; each has an environment variable (docs/mcp.md). */
export interface McpSettings {
  /** How long a tools/call without a task waits for a person's answer before it names the pending approval. */
  approvalWaitMs: number;
  /** How often a waiting call reads its approval when no wake-up came (the fallback; it wakes on `approval:<id>`). */
  approvalPollMs: number;
  /** How often a waiting call that has a progressToken sends a progress notification. */
  progressMs: number;
  /** How long a new approval is valid, answered or not, unless used (default {@link DEFAULT_MCP_APPROVAL_TTL_MS}). */
  approvalTtlMs?: number;
  /**
   * How often the namespaces of open sessions are checked for tool changes (`tools/list_changed`) when no wake-up
   * came (the fallback; a namespace is checked at once when `resources:<namespace>` is woken), and idle sessions closed.
   */
  listChangedPollMs: number;
  /** A session with no request for this long is closed. */
  sessionIdleMs: number;
  /** The most sessions one API key holds open at once. */
  sessionsPerKey: number;
}

/** How long an approval made over MCP stays valid when MT_APPROVAL_TTL is unset: one hour. */
export const DEFAULT_MCP_APPROVAL_TTL_MS = 3_600_000;

function envSeconds(name: string): number | undefined {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  return Number.isFinite(value) && value > 0 ? value * 1000 : undefined;
}

/**
 * The settings from the environment: `MT_MCP_APPROVAL_WAIT`, `MT_MCP_LIST_POLL`, `MT_MCP_SESSION_IDLE` (seconds),
 * `MT_APPROVAL_TTL`, `MT_MCP_SESSIONS_PER_KEY`.
 */
export function mcpSettingsFromEnv(overrides: Partial<McpSettings> = {}): McpSettings {
  return {
    // Under the 60 s request timeout of the SDK's clients (and of most hosts), so the answer arrives in time.
    approvalWaitMs: envSeconds('MT_MCP_APPROVAL_WAIT') ?? 45_000,
    approvalPollMs: 2_000,
    progressMs: 5_000,
    // An approval made outside a run has no run to end it: without MT_APPROVAL_TTL it lives an hour (docs/mcp.md).
    approvalTtlMs: envSeconds('MT_APPROVAL_TTL') ?? DEFAULT_MCP_APPROVAL_TTL_MS,
    listChangedPollMs: envSeconds('MT_MCP_LIST_POLL') ?? 5_000,
    sessionIdleMs: envSeconds('MT_MCP_SESSION_IDLE') ?? 30 * 60_000,
    sessionsPerKey: limitFromEnv('MT_MCP_SESSIONS_PER_KEY', 20),
    ...overrides,
  };
}
