/**
 * What the OpenAPI document says of one operation beyond its schemas: `description`, what it does and when;
 * `ok`, what its success answer is; `errors`, the codes of its own logic it can answer (the request, key, role,
 * idempotency and database codes every operation of its kind can answer are added by openapi-errors.ts).
 */
export interface OperationDoc {
  description: string;
  ok: string;
  /** The description of a 201 of an operation that also answers 200 (created rather than replaced). */
  created?: string;
  errors: string[];
}

const NAMED_NOT_FOUND: Record<string, string> = {
  Connector: 'api:connectors:not-found',
  Extop: 'api:extops:not-found',
  Agent: 'api:agents:not-found',
  Interaction: 'api:interactions:not-found',
};

const NOUNS: Record<string, [string, string]> = {
  Connector: ['connector', 'connectors'],
  Extop: ['tool', 'tools'],
  Agent: ['agent', 'agents'],
  Interaction: ['interaction', 'interactions'],
};

function versioned(noun: keyof typeof NOUNS): Record<string, OperationDoc> {
  const [one, many] = NOUNS[noun];
  const notFound = NAMED_NOT_FOUND[noun];
  const docs: Record<string, OperationDoc> = {
    [`list${noun}s`]: {
      description: `Lists the ${many} of the key's namespace by name, each with its latest version and whether that version is enabled.`,
      ok: `The ${many}, by name (an empty list when none is deployed)`,
      errors: [],
    },
    [`get${noun}`]: {
      description: `Reads the latest version of the ${one} named in the path, as deployed: its definition and the hash of its source.`,
      ok: `The latest version of the ${one}`,
      errors: [notFound],
    },
    [`list${noun}Versions`]: {
      description: `Lists every deployed version of the ${one}, newest first, with whether each is enabled.`,
      ok: `The versions of the ${one}, newest first`,
      errors: [notFound],
    },
    [`get${noun}Version`]: {
      description: `Reads one version of the ${one}, enabled or not: what runs pinned to that version use.`,
      ok: `That version of the ${one}`,
      errors: [notFound],
    },
  };
  if (noun === 'Connector' || noun === 'Extop') {
    docs[`disable${noun}Version`] = {
      description: `Disables one version of the ${one} (admin key): calls pinned to it fail with \`api:${many === 'tools' ? 'extops' : 'connectors'}:version-disabled\` from the next call on, until it is enabled again. Disabling a disabled version changes nothing.`,
      ok: `The version and its new state`,
      errors: [notFound],
    };
    docs[`enable${noun}Version`] = {
      description: `Enables one version of the ${one} again (admin key): calls pinned to it work from the next call on. Enabling an enabled version changes nothing.`,
      ok: `The version and its new state`,
      errors: [notFound],
    };
  }
  return docs;
}

/** Every operation's description, success description and own error codes, by operationId. */
export const OPERATION_DOCS: Record<string, OperationDoc> = {
  getHealth: {
    description:
      'Readiness: tells a load balancer or orchestrator whether this server can serve (its database answers within ' +
      "800 ms; with a worker, its fetch loop turns and its runs' heartbeat goes through), and whether wake-ups " +
      '(LISTEN/NOTIFY) are listening. Answers within 1 s. Needs no API key.',
    ok: 'The server and its database answer',
    errors: [],
  },
  createNamespace: {
    description:
      'Creates a namespace (its own connectors, tools, agents, interactions, secrets and keys) and its first admin ' +
      'key, shown in this answer only. Needs an admin key of the default namespace (the operator).',
    ok: 'The namespace and its first admin key (shown once: keep it)',
    errors: ['api:namespaces:exists'],
  },
  createKey: {
    description:
      "Creates an API key of the calling key's namespace with the role asked for (admin: may change the namespace; " +
      'user: may read, call and run). The key itself is in this answer only; only its hash is stored.',
    ok: 'The key, with its secret value (shown once)',
    errors: [],
  },
  listKeys: {
    description: "Lists the API keys of the calling key's namespace: id, name, role and creation time, never the key.",
    ok: 'The API keys of the namespace',
    errors: [],
  },
  deleteKey: {
    description:
      'Deletes an API key of the namespace: its next request is refused, and its open event streams end. A key may delete itself.',
    ok: 'The key was deleted',
    errors: ['api:keys:not-found'],
  },
  deploy: {
    description:
      'Compiles the config repo sent as files (path and text) and, when it has no error, stores a new version of ' +
      'each connector, tool, agent and interaction that changed, in one transaction. With dryRun the plan is ' +
      'answered and nothing is stored. A repo with errors answers 422 api:deploy:invalid with every diagnostic ' +
      '(a secret the namespace lacks, a blocked connector address, a syntax error: each its own code).',
    ok: 'The plan: what each resource became (created, updated, unchanged) and whether it was applied',
    errors: [
      'api:deploy:invalid',
      'api:deploy:reference-missing',
      'api:deploy:unstorable-text',
      'api:deploy:mcp-tool-missing',
      'api:deploy:mcp-unlisted',
    ],
  },
  ...versioned('Connector'),
  ...versioned('Extop'),
  ...versioned('Agent'),
  ...versioned('Interaction'),
  listExtops: {
    description:
      "Lists the tools of the key's namespace by name, each with its latest version, whether it is enabled, and " +
      'whether it can be called now (and if not, why).',
    ok: 'The tools, by name',
    errors: [],
  },
  callExtop: {
    description:
      'Makes one call of the tool (its latest enabled version, or the one named) through the gateway, with the ' +
      "namespace's secrets, as an agent would (admin key). A tool that needs a person's approval is not called " +
      'this way. The endpoint answering an error is a result with ok false; a call that could not be made is an error.',
    ok: "The call's result: the endpoint's status and body, or why the call failed",
    errors: [
      'api:extops:not-found',
      'api:extops:version-disabled',
      'api:connectors:version-disabled',
      'api:approvals:required',
      'api:gateway:arguments-invalid',
      'api:gateway:argument-unknown',
      'api:gateway:argument-bound',
      'api:gateway:request-invalid',
      'api:gateway:path-invalid',
      'api:gateway:secret-not-found',
      'api:connectors:secret-missing',
      'api:connectors:address-blocked',
      'api:egress:name-not-resolved',
      'api:gateway:upstream-unreachable',
      'api:gateway:timeout',
    ],
  },
  createSecret: {
    description:
      'Stores a secret of the namespace (encrypted under the master key) for tools to send as a credential. The ' +
      'value is never answered again, by any operation.',
    ok: 'The secret, by id and name (never its value)',
    errors: ['api:secrets:exists'],
  },
  listSecrets: {
    description: 'Lists the secrets of the namespace by id and name, with when each was created and last rotated.',
    ok: 'The secrets (never their values)',
    errors: [],
  },
  rotateSecret: {
    description: "Replaces a secret's value; the next call that uses it sends the new one.",
    ok: 'The secret, with its new updatedAt',
    errors: ['api:secrets:not-found'],
  },
  deleteSecret: {
    description: 'Deletes a secret; calls that need it then fail until one of that name is created again.',
    ok: 'The secret was deleted',
    errors: ['api:secrets:not-found'],
  },
  getSecretKeyStatus: {
    description:
      'Tells the operator which master key ids the secrets of every namespace are encrypted under, and which ' +
      'previous keys no secret uses any more (safe to remove from MT_SECRET_KEY).',
    ok: 'How many secrets each master key id holds',
    errors: [],
  },
  rotateSecretKey: {
    description:
      "Re-wraps every secret's data key under the current master key, in batches; values are not decrypted. " +
      'Resumable: run it again after an interruption.',
    ok: 'How many secrets were re-wrapped, and the status after',
    errors: ['api:secrets:decrypt-failed', 'api:secrets:key-id-missing'],
  },
  startRun: {
    description:
      'Starts a run of the interaction (its latest enabled version, or the one named) with its inputs; the run ' +
      'goes on in a worker. Follow it with getRun, listRunEvents or streamRunEvents. interactive false is an ' +
      'app run: a tool that needs approval fails instead of waiting for a person.',
    ok: 'The run, as started (status Running)',
    errors: [
      'api:interactions:not-found',
      'api:interactions:input-required',
      'api:interactions:input-unknown',
      'api:interactions:input-invalid',
      'api:runs:input-too-large',
      'api:secrets:not-found',
    ],
  },
  listRuns: {
    description:
      'Lists the runs of the namespace, newest first, a page at a time: pass the nextCursor of a page as cursor ' +
      'to get the next. Filters by interaction and status.',
    ok: 'One page of runs and the cursor of the next (null on the last page)',
    errors: ['api:runs:invalid-cursor'],
  },
  getRun: {
    description: 'Reads one run: its status, inputs, result or error, and the approval it waits on, if any.',
    ok: 'The run',
    errors: ['api:runs:not-found'],
  },
  listRunEvents: {
    description:
      'Reads the stored events of a run after a seq, in order: what the model answered, which tools it called ' +
      'and with what result, approvals, and the end. Poll with after set to the last seq seen.',
    ok: 'The events after `after`, in seq order',
    errors: ['api:runs:not-found'],
  },
  streamRunEvents: {
    description:
      'Follows a run live as Server-Sent Events: its stored events first, then each new one as it happens, until ' +
      'the run ends. Resume after a disconnect with Last-Event-ID (or ?after=). Errors before the stream begins ' +
      'are JSON; one after it began is an `event: error`.',
    ok: 'The events of the run as a text/event-stream',
    errors: ['api:runs:not-found', 'api:runs:too-many-streams'],
  },
  cancelRun: {
    description: 'Cancels a run that has not ended; a call in flight is abandoned and the run ends Cancelled.',
    ok: 'The run, now Cancelled',
    errors: ['api:runs:not-found', 'api:runs:already-ended'],
  },
  sendRunMessage: {
    description:
      'Sends the next message of a conversation (an interaction with conversation) that waits for one ' +
      '(status WaitingForInput); the run goes on with it.',
    ok: 'The run, running again',
    errors: [
      'api:runs:not-found',
      'api:runs:not-waiting-for-input',
      'api:runs:message-empty',
      'api:runs:already-ended',
    ],
  },
  approveRun: {
    description:
      "Approves the call the run waits on (status PendingApproval), with a person's key: exactly that call is " +
      'made, and the run goes on. approvalId guards against answering another approval than the one shown.',
    ok: 'The run, going on',
    errors: [
      'api:runs:not-found',
      'api:runs:not-waiting',
      'api:approvals:not-pending-for-run',
      'api:approvals:already-answered',
      'api:approvals:closed',
      'api:approvals:expired',
      'api:approvals:person-required',
    ],
  },
  rejectRun: {
    description:
      "Rejects the call the run waits on, with a person's key and a reason the model is told; it may redraft " +
      'the call or give up.',
    ok: 'The run, going on without that call',
    errors: [
      'api:runs:not-found',
      'api:runs:not-waiting',
      'api:approvals:not-pending-for-run',
      'api:approvals:already-answered',
      'api:approvals:closed',
      'api:approvals:expired',
      'api:approvals:reason-required',
      'api:approvals:person-required',
    ],
  },
  listApprovals: {
    description:
      'Lists the approvals of the namespace, newest first: the calls waiting for a person (Pending) unless status ' +
      'asks for answered or expired ones.',
    ok: 'The approvals',
    errors: [],
  },
  getApproval: {
    description: 'Reads one approval: the tool, the exact arguments of the call, who answered and when it expires.',
    ok: 'The approval',
    errors: ['api:approvals:not-found'],
  },
  approveApproval: {
    description:
      "Approves a pending call with a person's key: exactly that call is made (by its run, or by the MCP client " +
      'that asked, on its retry).',
    ok: 'The approval, now Approved',
    errors: [
      'api:approvals:not-found',
      'api:approvals:already-answered',
      'api:approvals:closed',
      'api:approvals:expired',
      'api:approvals:person-required',
    ],
  },
  rejectApproval: {
    description:
      "Rejects a pending call with a person's key and a reason; the call is not made and the model is told why.",
    ok: 'The approval, now Rejected',
    errors: [
      'api:approvals:not-found',
      'api:approvals:already-answered',
      'api:approvals:closed',
      'api:approvals:expired',
      'api:approvals:reason-required',
      'api:approvals:person-required',
    ],
  },
  createFileSystem: {
    description:
      'Creates an empty file system of the namespace, which runs read and write through file tools (admin key).',
    ok: 'The file system',
    errors: ['api:file-systems:exists'],
  },
  listFileSystems: {
    description: 'Lists the file systems of the namespace, with how many files and bytes each holds.',
    ok: 'The file systems',
    errors: [],
  },
  getFileSystem: {
    description: 'Reads one file system: its name, description, and how many files and bytes it holds.',
    ok: 'The file system',
    errors: ['api:file-systems:not-found'],
  },
  deleteFileSystem: {
    description: 'Deletes a file system and every file in it (admin key).',
    ok: 'The file system was deleted',
    errors: ['api:file-systems:not-found'],
  },
  listFiles: {
    description:
      'Lists the files of a file system under a path prefix, a page at a time in byte order of their paths: pass ' +
      'the nextCursor of a page as cursor to get the next.',
    ok: 'One page of files (without their content) and the cursor of the next',
    errors: ['api:file-systems:not-found', 'api:files:cursor-invalid', 'api:files:path-invalid'],
  },
  writeFile: {
    description:
      'Creates or replaces a text file from JSON, as a file tool sends it; with ifMatch, only over the file at ' +
      'that ETag. 201 when the file is new, 200 when it replaced one.',
    ok: 'The file was replaced',
    created: 'The file was created',
    errors: [
      'api:file-systems:not-found',
      'api:files:path-invalid',
      'api:files:precondition-failed',
      'api:files:too-large',
      'api:file-systems:full',
    ],
  },
  moveFile: {
    description:
      'Moves (renames) a file within its file system; a file already at the target is replaced only with overwrite.',
    ok: 'The file at its new path',
    errors: ['api:file-systems:not-found', 'api:files:not-found', 'api:files:exists', 'api:files:path-invalid'],
  },
  getFile: {
    description: 'Reads a file: its bytes as stored, with its Content-Type and ETag headers.',
    ok: 'The bytes of the file',
    errors: ['api:file-systems:not-found', 'api:files:not-found', 'api:files:path-invalid'],
  },
  deleteFile: {
    description: 'Deletes a file; with If-Match, only the file at that ETag.',
    ok: 'The file was deleted',
    errors: [
      'api:file-systems:not-found',
      'api:files:not-found',
      'api:files:path-invalid',
      'api:files:precondition-failed',
    ],
  },
  putFile: {
    description:
      'Creates or replaces a file with the request body as its bytes (any type, text or binary; its Content-Type ' +
      'is stored); with If-Match, only over the file at that ETag. 201 when the file is new, 200 when it replaced one.',
    ok: 'The file was replaced',
    created: 'The file was created',
    errors: [
      'api:file-systems:not-found',
      'api:files:path-invalid',
      'api:files:precondition-failed',
      'api:files:too-large',
      'api:file-systems:full',
    ],
  },
  createKnowledgeBase: {
    description:
      'Creates an empty knowledge base (admin key), searched with the PostgreSQL text search language named ' +
      '(english by default) and, with an embedding model, by meaning too.',
    ok: 'The knowledge base',
    errors: ['api:knowledge:exists', 'api:knowledge:language-unknown'],
  },
  listKnowledgeBases: {
    description: 'Lists the knowledge bases of the namespace, with how many documents and passages each holds.',
    ok: 'The knowledge bases',
    errors: [],
  },
  getKnowledgeBase: {
    description: 'Reads one knowledge base: its name, language, and how many documents and passages it holds.',
    ok: 'The knowledge base',
    errors: ['api:knowledge:not-found'],
  },
  deleteKnowledgeBase: {
    description: 'Deletes a knowledge base with its documents and passages (admin key).',
    ok: 'The knowledge base was deleted',
    errors: ['api:knowledge:not-found'],
  },
  addKnowledgeDocument: {
    description:
      'Adds a document to a knowledge base (admin key): the body is the file, as text/plain, text/markdown, ' +
      'text/html or application/pdf, named by ?name=. Its text is split into passages; a document of the same ' +
      'name is replaced.',
    ok: 'The document, with how many passages it was split into',
    errors: [
      'api:knowledge:not-found',
      'api:knowledge:unsupported-type',
      'api:knowledge:empty',
      'api:knowledge:unreadable',
    ],
  },
  listKnowledgeDocuments: {
    description: 'Lists the documents of a knowledge base, with their size, passages and whether they are ready.',
    ok: 'The documents',
    errors: ['api:knowledge:not-found'],
  },
  getKnowledgeDocument: {
    description: 'Reads one document of a knowledge base (not its text).',
    ok: 'The document',
    errors: ['api:knowledge:not-found', 'api:knowledge:document-not-found'],
  },
  deleteKnowledgeDocument: {
    description: 'Deletes a document with its passages (admin key).',
    ok: 'The document was deleted',
    errors: ['api:knowledge:not-found', 'api:knowledge:document-not-found'],
  },
  searchKnowledgeBase: {
    description:
      'Searches a knowledge base: the passages that best answer a question, best first (full-text ranking, fused ' +
      'with vector similarity when the server has an embedding model).',
    ok: 'The passages found, best first',
    errors: ['api:knowledge:not-found'],
  },
  searchKnowledge: {
    description:
      'Searches the knowledge base named in the body (partitionId), as a tool bound to it calls it; otherwise as ' +
      'searchKnowledgeBase.',
    ok: 'The passages found, best first',
    errors: ['api:knowledge:not-found'],
  },
};
