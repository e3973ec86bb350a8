/** How the MCP endpoints wait, poll and expire; each has an environment variable (docs/mcp.md). */
export interface McpSettings {
  /** How long a tools/call without a task waits for a person's answer before it names the pending approval. */
  approvalWaitMs: number;
  /** How often a waiting call reads its approval when no wake-up came (the fallback; it wakes on `approval:<id>`). */
  approvalPollMs: number;
  /** How often a waiting call that has a progressToken sends a progress notification. */
  progressMs: number;
  /** How long a new approval is valid, answered or not, unless used (default `MT_APPROVAL_TTL`, else one hour). */
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
