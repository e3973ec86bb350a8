import type { RunEvent } from '@maitento/engine';
import { isMtError } from '@maitento/errors';
import type { Interaction } from '@maitento/lang';
import {
  type FileInfo,
  type FileSystemInfo,
  getFile,
  getFileSystem,
  getKnowledgeBase,
  getVersion,
  type KnowledgeBase,
  type KnowledgeDocument,
  type KnowledgeSearchResult,
  listDocuments,
  listFileSystems,
  listFiles,
  listKnowledgeBases,
  listResources,
  putDocument,
} from '@maitento/store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { serverErrors } from '../errors.js';
import { answeringActor } from '../http/actor.js';
import { documentChunks, documentType, searchKnowledge } from '../knowledge/index.js';
import { accessRefusal, allowed } from '../plugins/auth.js';
import { getRunnable } from '../resources/resource-reads.js';
import type { ServerContext } from '../server/context.js';
import type { PageKit } from './automation-routes.js';
import { type FormState, readSchemaForm, SchemaFields } from './schema-form.js';
import { DataTable } from './table.js';
import { type Chrome, Csrf, fragment, Layout, page, RunStatusLine, StepItem, when } from './views.js';

// An interaction's page (a run started from a form generated from its inputs), a conversation's chat, knowledge
// bases (documents, upload, a search) and file systems (folders and files): docs/console.md, decision 0360.

/** The form fields' prefix of a run's inputs (`in/message`). */
const IN = 'in';
/** The most files a folder's page reads (its folders and files are worked out from their paths). */
const FOLDER_FILES = 1000;
/** The most of a text file a file's page shows. */
const SHOWN_BYTES = 100_000;
const ENDED = new Set(['Completed', 'Failed', 'Cancelled']);

type JsonSchema = Record<string, unknown>;

/** A file posted by the knowledge base's upload form (multipart/form-data, parsed by the console). */
export interface PostedFile {
  filename: string;
  type: string;
  bytes: Buffer;
}

/** The JSON type a binding's target takes (a connector parameter's type, or the request body field's). */
async function bindingSchema(
  ctx: ServerContext,
  namespace: string,
  binding: Interaction['inputs']['functions']['binding'][number],
): Promise<JsonSchema> {
  try {
    const tool = await getVersion(ctx.db, namespace, 'tool', binding.function);
    const pin = tool.pins.find((p) => p.kind === 'connector');
    if (pin === undefined) return { type: 'string' };
    const connector = (await getVersion(ctx.db, namespace, 'connector', pin.name, pin.version)).resource;
    if (binding.type !== 'request') {
      const param = connector.parameters[binding.type].find((p) => p.name === binding.target);
      return { type: param?.type ?? 'string' };
    }
    let schema: unknown = connector.schema.request;
    for (const part of binding.target.split('/')) {
      const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
      schema = props?.[part];
    }
    const type = (schema as { type?: unknown } | undefined)?.type;
    return typeof type === 'string' && type !== 'null' ? { type } : {};
  } catch {
    return { type: 'string' };
  }
}

/** An interaction's run inputs as one JSON Schema object: prompts, bindings (their target's type) and auth inputs. */
export async function inputsSchema(ctx: ServerContext, namespace: string, interaction: Interaction) {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const p of interaction.inputs.prompts) {
    properties[p.name] = {
      type: 'string',
      ...(p.description ? { description: p.description } : {}),
      ...(p.default !== undefined ? { default: p.default } : {}),
    };
    if (p.required && p.default === undefined) required.push(p.name);
  }
  for (const b of interaction.inputs.functions.binding) {
    const shown = b.default === undefined ? '' : ` (default ${JSON.stringify(b.default)})`;
    properties[b.name] = {
      ...(await bindingSchema(ctx, namespace, b)),
      description: `${b.description ?? `${b.target} of ${b.function}`}${shown}`,
    };
    if (b.required && b.default === undefined) required.push(b.name);
  }
  for (const a of interaction.inputs.functions.auth) {
    properties[a.name] = {
      type: 'string',
      description: `${a.description ? `${a.description}: ` : ''}the id of a secret (mt secret-list), never its value`,
    };
    if (a.required && a.secret === undefined) required.push(a.name);
  }
  return { type: 'object', properties, required };
}

export function InteractionsPage(props: { chrome: Chrome; interactions: { name: string; latestVersion: number }[] }) {
  return (
    <Layout title="Interactions" chrome={props.chrome}>
      <h1>Interactions</h1>
      <DataTable
        caption="Interactions, by name"
        columns={['Interaction', 'Latest version']}
        rows={props.interactions}
        empty="No interaction is deployed."
        row={(i) => (
          <tr>
            <td>
              <a href={`/console/interactions/${encodeURIComponent(i.name)}`}>{i.name}</a>
            </td>
            <td>v{i.latestVersion}</td>
          </tr>
        )}
      />
    </Layout>
  );
}

export function InteractionPage(props: {
  chrome: Chrome;
  interaction: Interaction;
  version: number;
  schema: unknown;
  canStart: boolean;
  form?: FormState;
  error?: { code: string; message: string };
}) {
  const { interaction: i } = props;
  const action = `/console/interactions/${encodeURIComponent(i.name)}/runs`;
  const conversation = i.conversation !== undefined;
  return (
    <Layout title={`Interaction ${i.name}`} chrome={props.chrome}>
      <h1>Interaction {i.name}</h1>
      <dl>
        <dt>Version</dt>
        <dd>v{props.version}</dd>
        <dt>Kind</dt>
        <dd>{conversation ? 'A conversation (chat with it once it starts)' : 'One-shot'}</dd>
        <dt>Agent</dt>
        <dd>{i.agent.name}</dd>
        <dt>Task</dt>
        <dd>{i.task}</dd>
      </dl>
      <p>
        <a href={`/console/runs?interaction=${encodeURIComponent(i.name)}`}>Its runs</a>
      </p>
      {props.canStart ? (
        <form method="post" action={action} class="schema-form" aria-labelledby="start-heading">
          <h2 id="start-heading">{conversation ? 'Start a conversation' : 'Start a run'}</h2>
          <Csrf token={props.chrome.csrfToken} />
          {props.error ? (
            <p role="alert" class="error" id="start-error" tabindex={-1}>
              {props.error.message} ({props.error.code})
            </p>
          ) : null}
          <SchemaFields schema={props.schema} prefix={IN} state={props.form} />
          <button type="submit" class="primary">
            {conversation ? 'Start and chat' : 'Start the run'}
          </button>
        </form>
      ) : (
        <p>Starting a run needs a key of the run level (admin, user, runner).</p>
      )}
    </Layout>
  );
}

/** The chat's message form (swapped in place after each message with JavaScript on). */
export function MessageForm(props: {
  runId: string;
  csrfToken: string;
  sent?: string;
  error?: { code: string; message: string };
}) {
  const action = `/console/runs/${props.runId}/messages`;
  return (
    <form id="chat-form" method="post" action={action} hx-post={action} hx-target="this" hx-swap="outerHTML">
      <Csrf token={props.csrfToken} />
      <label for="chat-text">Your message</label>
      <textarea
        id="chat-text"
        name="text"
        rows={3}
        required
        aria-describedby={props.error ? 'chat-error' : undefined}
        autofocus={props.sent !== undefined ? true : undefined}
      />
      <button type="submit" class="primary">
        Send
      </button>
      <p role="status" id="chat-status">
        {props.sent !== undefined ? 'Sent: the reply appears in the conversation below.' : ''}
      </p>
      {props.error ? (
        <p role="alert" class="error" id="chat-error">
          {props.error.message} ({props.error.code})
        </p>
      ) : null}
    </form>
  );
}

export function ChatPage(props: {
  chrome: Chrome;
  run: { id: string; status: string; interaction: string };
  events: RunEvent[];
}) {
  const { run, events } = props;
  const ended = ENDED.has(run.status);
  const last = events.length === 0 ? 0 : events[events.length - 1].seq;
  const live = ended
    ? {}
    : {
        'hx-sse:connect': `/console/runs/${run.id}/live?after=${last}`,
        'hx-sse:close': 'done',
        'hx-swap': 'beforeend',
      };
  return (
    <Layout title={`Chat ${run.id.slice(0, 8)}`} chrome={props.chrome} live={ended ? undefined : 'sse'}>
      <h1>
        Conversation {run.id.slice(0, 8)} of {run.interaction}
      </h1>
      <p>
        Status:{' '}
        <span aria-live="polite">
          <RunStatusLine status={run.status} />
        </span>{' '}
        · <a href={`/console/runs/${run.id}`}>The run's page</a> (timeline, inputs, versions)
      </p>
      <h2>The conversation</h2>
      <ol id="steps" class="chat" aria-live="polite" {...live}>
        {events.map((e) => (
          <StepItem event={e} />
        ))}
      </ol>
      {ended ? <p>The conversation has ended.</p> : <MessageForm runId={run.id} csrfToken={props.chrome.csrfToken} />}
    </Layout>
  );
}

export function KnowledgeBasesPage(props: { chrome: Chrome; bases: KnowledgeBase[] }) {
  return (
    <Layout title="Knowledge bases" chrome={props.chrome}>
      <h1>Knowledge bases</h1>
      <DataTable
        caption="Knowledge bases, by name"
        columns={['Name', 'Documents', 'Passages', 'Language']}
        rows={props.bases}
        empty="No knowledge base yet (an admin makes one: mt kb-create, or POST /v1/knowledge-bases)."
        row={(b) => (
          <tr>
            <td>
              <a href={`/console/knowledge/${b.id}`}>{b.name}</a>
            </td>
            <td>{b.documentCount}</td>
            <td>{b.chunkCount}</td>
            <td>{b.language}</td>
          </tr>
        )}
      />
    </Layout>
  );
}

export function KnowledgeBasePage(props: {
  chrome: Chrome;
  base: KnowledgeBase;
  documents: KnowledgeDocument[];
  canUpload: boolean;
  notice?: string;
  error?: { code: string; message: string };
  query?: string;
  results?: KnowledgeSearchResult[];
}) {
  const { base } = props;
  const path = `/console/knowledge/${base.id}`;
  return (
    <Layout title={`Knowledge base ${base.name}`} chrome={props.chrome}>
      <h1>Knowledge base {base.name}</h1>
      {base.description ? <p>{base.description}</p> : null}
      {props.notice ? (
        <p role="status" id="kb-notice">
          {props.notice}
        </p>
      ) : null}
      {props.error ? (
        <p role="alert" class="error" id="kb-error">
          {props.error.message} ({props.error.code})
        </p>
      ) : null}
      <section aria-labelledby="search-heading">
        <h2 id="search-heading">Try a search</h2>
        <form method="get" action={path} class="search">
          <label for="q">Question or words</label>
          <input id="q" name="q" type="search" value={props.query ?? ''} />
          <button type="submit">Search</button>
        </form>
        {props.results !== undefined ? (
          props.results.length === 0 ? (
            <p id="search-results">No passage matches.</p>
          ) : (
            <ol id="search-results" class="passages">
              {props.results.map((r) => (
                <li>
                  <p>
                    <strong>{r.document.name}</strong>
                    {r.title ? ` — ${r.title}` : ''} <span class="type">(score {r.score.toFixed(3)})</span>
                  </p>
                  <blockquote class="model-text">{r.text}</blockquote>
                </li>
              ))}
            </ol>
          )
        ) : (
          <p>The passages a bound tool's search would return, best first.</p>
        )}
      </section>
      <section aria-labelledby="documents-heading">
        <h2 id="documents-heading">Documents</h2>
        <DataTable
          id="documents"
          caption="Documents, by name, with their status"
          columns={['Name', 'Type', 'Size', 'Passages', 'Status', 'Added']}
          rows={props.documents}
          empty="No document yet."
          row={(d) => (
            <tr>
              <td>{d.name}</td>
              <td>{d.contentType}</td>
              <td>{d.bytes} bytes</td>
              <td>{d.chunkCount}</td>
              <td>
                <span class={`badge ${d.status === 'ready' ? 's-ok' : 's-warn'}`}>
                  {d.status === 'ready' ? 'ready' : 'embedding (found by words already)'}
                </span>
              </td>
              <td>{when(d.createdAt)}</td>
            </tr>
          )}
        />
        {props.canUpload ? (
          <form
            method="post"
            action={`${path}/documents`}
            enctype="multipart/form-data"
            aria-labelledby="upload-heading"
          >
            <h3 id="upload-heading">Add a document</h3>
            <Csrf token={props.chrome.csrfToken} />
            <label for="document">File (text, Markdown, HTML or PDF; a document of the same name is replaced)</label>
            <input id="document" name="file" type="file" required accept=".txt,.md,.markdown,.html,.htm,.pdf" />
            <label for="document-name">Name (optional: the file's name)</label>
            <input id="document-name" name="name" type="text" />
            <button type="submit" class="primary">
              Upload
            </button>
          </form>
        ) : (
          <p>Adding a document is an admin key's.</p>
        )}
      </section>
    </Layout>
  );
}

export function FileSystemsPage(props: { chrome: Chrome; systems: FileSystemInfo[] }) {
  return (
    <Layout title="File systems" chrome={props.chrome}>
      <h1>File systems</h1>
      <DataTable
        caption="File systems, by name"
        columns={['Name', 'Files', 'Size']}
        rows={props.systems}
        empty="No file system yet."
        row={(s) => (
          <tr>
            <td>
              <a href={`/console/files/${s.id}`}>{s.name}</a>
            </td>
            <td>{s.files}</td>
            <td>{s.bytes} bytes</td>
          </tr>
        )}
      />
    </Layout>
  );
}

function Crumbs(props: { system: FileSystemInfo; prefix: string; file?: string }) {
  const parts = props.prefix.split('/').filter(Boolean);
  const base = `/console/files/${props.system.id}`;
  return (
    <nav aria-label="Folder">
      <ol class="crumbs">
        <li>
          <a href={base} aria-current={parts.length === 0 && !props.file ? 'page' : undefined}>
            {props.system.name}
          </a>
        </li>
        {parts.map((p, n) => {
          const prefix = `${parts.slice(0, n + 1).join('/')}/`;
          const current = n === parts.length - 1 && !props.file;
          return (
            <li>
              <a href={`${base}?prefix=${encodeURIComponent(prefix)}`} aria-current={current ? 'page' : undefined}>
                {p}
              </a>
            </li>
          );
        })}
        {props.file ? (
          <li>
            <span aria-current="page">{props.file}</span>
          </li>
        ) : null}
      </ol>
    </nav>
  );
}

export function FolderPage(props: {
  chrome: Chrome;
  system: FileSystemInfo;
  prefix: string;
  folders: { name: string; files: number }[];
  files: FileInfo[];
  more: boolean;
}) {
  const { system, prefix } = props;
  const base = `/console/files/${system.id}`;
  return (
    <Layout title={`File system ${system.name}`} chrome={props.chrome}>
      <h1>
        File system {system.name}
        {prefix ? `: ${prefix}` : ''}
      </h1>
      {system.description ? <p>{system.description}</p> : null}
      <Crumbs system={system} prefix={prefix} />
      {props.folders.length === 0 && props.files.length === 0 ? (
        <p>This folder is empty.</p>
      ) : (
        <table id="folder">
          <caption>Folders, then files, by name</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Size</th>
              <th scope="col">Type</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {props.folders.map((f) => (
              <tr>
                <td>
                  <a href={`${base}?prefix=${encodeURIComponent(`${prefix}${f.name}/`)}`}>{f.name}/</a>
                </td>
                <td>
                  {f.files} {f.files === 1 ? 'file' : 'files'}
                </td>
                <td>folder</td>
                <td />
              </tr>
            ))}
            {props.files.map((f) => (
              <tr>
                <td>
                  <a href={`${base}/file?path=${encodeURIComponent(f.path)}`}>{f.path.slice(prefix.length)}</a>
                </td>
                <td>{f.size} bytes</td>
                <td>{f.contentType}</td>
                <td>{when(f.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {props.more ? <p>Only the first {FOLDER_FILES} files under this folder are shown.</p> : null}
    </Layout>
  );
}

export function FilePage(props: {
  chrome: Chrome;
  system: FileSystemInfo;
  file: FileInfo;
  text?: string;
  truncated: boolean;
}) {
  const { file } = props;
  const slash = file.path.lastIndexOf('/');
  const prefix = slash < 0 ? '' : file.path.slice(0, slash + 1);
  return (
    <Layout title={`File ${file.path}`} chrome={props.chrome}>
      <h1>{file.path}</h1>
      <Crumbs system={props.system} prefix={prefix} file={file.path.slice(prefix.length)} />
      <dl>
        <dt>Size</dt>
        <dd>{file.size} bytes</dd>
        <dt>Type</dt>
        <dd>{file.contentType}</dd>
        <dt>Updated</dt>
        <dd>{when(file.updatedAt)}</dd>
      </dl>
      {props.text !== undefined ? (
        <>
          <h2>Content{props.truncated ? ` (the first ${SHOWN_BYTES} bytes)` : ''}</h2>
          <section aria-label={`The content of ${file.path}`} tabindex={0} class="file-content">
            <pre>{props.text}</pre>
          </section>
        </>
      ) : (
        <p>Not text: its content is not shown (GET /v1/file-systems/{props.system.id}/files/… reads it).</p>
      )}
    </Layout>
  );
}

function isText(contentType: string): boolean {
  const t = contentType.split(';')[0].trim().toLowerCase();
  return t.startsWith('text/') || t === 'application/json' || t.endsWith('+json') || t === 'application/xml';
}

/** The type of an uploaded document: the browser's, else from the file name's extension. */
function uploadType(file: PostedFile): string | undefined {
  const given = documentType(file.type);
  if (given) return given;
  const ext = file.filename.toLowerCase().split('.').pop();
  const byExt: Record<string, string> = {
    txt: 'text/plain',
    md: 'text/markdown',
    markdown: 'text/markdown',
    html: 'text/html',
    htm: 'text/html',
    pdf: 'application/pdf',
  };
  return ext ? documentType(byExt[ext]) : undefined;
}

/** The interactions', chats', knowledge bases' and file systems' pages (decision 0360). */
export function catalogRoutes(app: FastifyInstance, ctx: ServerContext, kit: PageKit): void {
  const { chrome, html } = kit;
  const { engine } = ctx;

  const errorOf = (error: unknown) => {
    if (!isMtError(error)) throw error;
    return { code: error.code, message: error.message };
  };

  app.get('/console/interactions', async (request, reply) => {
    const interactions = await listResources(ctx.db, request.identity.namespace, 'interaction');
    return html(
      reply,
      page(<InteractionsPage chrome={await chrome(request, 'interactions')} interactions={interactions} />),
    );
  });

  async function interactionPage(
    request: FastifyRequest,
    reply: FastifyReply,
    name: string,
    form?: FormState,
    error?: { code: string; message: string },
    status = 200,
  ) {
    const namespace = request.identity.namespace;
    const stored = await getRunnable(ctx.db, namespace, 'interaction', name);
    return html(
      reply,
      page(
        <InteractionPage
          chrome={await chrome(request, 'interactions')}
          interaction={stored.resource}
          version={stored.version}
          schema={await inputsSchema(ctx, namespace, stored.resource)}
          canStart={allowed(request.identity, 'run')}
          form={form}
          error={error}
        />,
      ),
      status,
    );
  }

  app.get<{ Params: { name: string } }>('/console/interactions/:name', async (request, reply) =>
    interactionPage(request, reply, request.params.name),
  );

  // A run started as `POST /v1/interactions/{name}/runs` starts one (the `run` level), its inputs from the form.
  app.post<{ Params: { name: string }; Body: Record<string, string | undefined> }>(
    '/console/interactions/:name/runs',
    async (request, reply) => {
      const refused = accessRefusal(request.identity, 'run');
      if (refused !== undefined) throw refused;
      const namespace = request.identity.namespace;
      const stored = await getRunnable(ctx.db, namespace, 'interaction', request.params.name);
      const read = readSchemaForm(await inputsSchema(ctx, namespace, stored.resource), request.body, IN);
      const refusedFields = Object.values(read.errors);
      if (refusedFields.length > 0) {
        const e = serverErrors.create('api:request:invalid', { detail: refusedFields.join(' ') });
        return interactionPage(request, reply, stored.name, read, { code: e.code, message: e.message }, 422);
      }
      try {
        const run = await engine.startRun(
          namespace,
          stored.name,
          { inputs: read.value, interactive: true },
          { keyId: request.identity.keyId },
        );
        const conversation = stored.resource.conversation !== undefined;
        return reply.redirect(`/console/runs/${run.id}${conversation ? '/chat' : ''}`, 303);
      } catch (error) {
        const e = errorOf(error);
        return interactionPage(request, reply, stored.name, read, e, (error as { status?: number }).status ?? 422);
      }
    },
  );

  app.get<{ Params: { id: string } }>('/console/runs/:id/chat', async (request, reply) => {
    const namespace = request.identity.namespace;
    const run = await engine.getRun(namespace, request.params.id, request.identity);
    const events: RunEvent[] = [];
    for (let after = 0; ; ) {
      const batch = await engine.listEvents(namespace, run.id, after, 1000, request.identity);
      events.push(...batch);
      if (batch.length < 1000) break;
      after = batch[batch.length - 1].seq;
    }
    return html(
      reply,
      page(
        <ChatPage
          chrome={await chrome(request, 'interactions')}
          run={{ id: run.id, status: run.status, interaction: run.interaction.name }}
          events={events}
        />,
      ),
    );
  });

  // The next message of a conversation, as `POST /v1/runs/{id}/messages` sends it (the `run` level); the reply comes
  // over the chat's SSE stream, the run page's.
  app.post<{ Params: { id: string }; Body: { text?: string } }>(
    '/console/runs/:id/messages',
    async (request, reply) => {
      const refused = accessRefusal(request.identity, 'run');
      if (refused !== undefined) throw refused;
      const id = request.params.id;
      const text = request.body.text ?? '';
      const htmx = request.headers['hx-request'] === 'true';
      try {
        const by = await answeringActor(ctx.db, request);
        await engine.sendMessage(request.identity.namespace, id, text, by, request.identity);
      } catch (error) {
        const e = errorOf(error);
        if (!htmx) throw error;
        return html(
          reply,
          fragment(<MessageForm runId={id} csrfToken={request.consoleSession?.csrfToken ?? ''} error={e} />),
        );
      }
      if (!htmx) return reply.redirect(`/console/runs/${id}/chat`, 303);
      return html(
        reply,
        fragment(<MessageForm runId={id} csrfToken={request.consoleSession?.csrfToken ?? ''} sent={text} />),
      );
    },
  );

  app.get('/console/knowledge', async (request, reply) => {
    const bases = await listKnowledgeBases(ctx.db, request.identity.namespace);
    return html(reply, page(<KnowledgeBasesPage chrome={await chrome(request, 'knowledge')} bases={bases} />));
  });

  async function knowledgePage(
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    extra: { notice?: string; error?: { code: string; message: string }; query?: string } = {},
    status = 200,
  ) {
    const namespace = request.identity.namespace;
    const base = await getKnowledgeBase(ctx.db, namespace, id);
    const documents = await listDocuments(ctx.db, namespace, id);
    const query = extra.query?.trim();
    // The search of `POST /v1/knowledge-bases/{id}/search`: full-text, fused with vectors when there is a model.
    const results = query
      ? await searchKnowledge(
          {
            db: ctx.db,
            ...(ctx.embeddingModel ? { embeddingModel: ctx.embeddingModel } : {}),
            vectorSearch: ctx.vectorSearch,
            warn: (obj, msg) => request.log.warn(obj, msg),
          },
          namespace,
          id,
          query,
        )
      : undefined;
    return html(
      reply,
      page(
        <KnowledgeBasePage
          chrome={await chrome(request, 'knowledge')}
          base={base}
          documents={documents}
          canUpload={allowed(request.identity, 'admin')}
          notice={extra.notice}
          error={extra.error}
          query={extra.query}
          results={results}
        />,
      ),
      status,
    );
  }

  app.get<{ Params: { id: string }; Querystring: { q?: string; added?: string } }>(
    '/console/knowledge/:id',
    async (request, reply) =>
      knowledgePage(request, reply, request.params.id, {
        query: request.query.q,
        ...(request.query.added ? { notice: `Added ${request.query.added}.` } : {}),
      }),
  );

  // A document added as `POST /v1/knowledge-bases/{id}/documents` adds one (an admin's): the same extraction and
  // passages, the same store function.
  app.post<{ Params: { id: string }; Body: { file?: PostedFile; name?: string } }>(
    '/console/knowledge/:id/documents',
    async (request, reply) => {
      const refused = accessRefusal(request.identity, 'admin');
      if (refused !== undefined) throw refused;
      const namespace = request.identity.namespace;
      const id = request.params.id;
      const file = request.body.file;
      try {
        await getKnowledgeBase(ctx.db, namespace, id);
        if (file === undefined || file.bytes.length === 0) throw serverErrors.create('api:knowledge:empty', {});
        const type = uploadType(file);
        if (!type) throw serverErrors.create('api:knowledge:unsupported-type', { type: file.type || 'none' });
        const name = request.body.name?.trim() || file.filename || 'document';
        const chunks = await documentChunks(name, type as never, file.bytes, ctx.knowledgeExtractBudget);
        await putDocument(ctx.db, namespace, id, {
          name,
          contentType: type,
          bytes: file.bytes.length,
          chunks,
          embedding: ctx.embeddingModel !== undefined,
        });
        ctx.embeddingWorker?.wake();
        return reply.redirect(`/console/knowledge/${id}?added=${encodeURIComponent(name)}`, 303);
      } catch (error) {
        const e = errorOf(error);
        return knowledgePage(request, reply, id, { error: e }, (error as { status?: number }).status ?? 422);
      }
    },
  );

  app.get('/console/files', async (request, reply) => {
    const systems = await listFileSystems(ctx.db, request.identity.namespace);
    return html(reply, page(<FileSystemsPage chrome={await chrome(request, 'files')} systems={systems} />));
  });

  app.get<{ Params: { id: string }; Querystring: { prefix?: string } }>(
    '/console/files/:id',
    async (request, reply) => {
      // Listing files is the `run` level's, as `GET /v1/file-systems/{id}/files` is.
      const refused = accessRefusal(request.identity, 'run');
      if (refused !== undefined) throw refused;
      const namespace = request.identity.namespace;
      const system = await getFileSystem(ctx.db, namespace, request.params.id);
      let prefix = (request.query.prefix ?? '').replace(/^\/+/, '');
      if (prefix !== '' && !prefix.endsWith('/')) prefix += '/';
      const all: FileInfo[] = [];
      let cursor: string | undefined;
      do {
        const pageOf = await listFiles(ctx.db, namespace, system.id, {
          prefix,
          limit: 500,
          ...(cursor ? { cursor } : {}),
        });
        all.push(...pageOf.files);
        cursor = pageOf.nextCursor ?? undefined;
      } while (cursor !== undefined && all.length < FOLDER_FILES);
      const folders = new Map<string, number>();
      const files: FileInfo[] = [];
      for (const f of all.slice(0, FOLDER_FILES)) {
        const rest = f.path.slice(prefix.length);
        const slash = rest.indexOf('/');
        if (slash < 0) files.push(f);
        else folders.set(rest.slice(0, slash), (folders.get(rest.slice(0, slash)) ?? 0) + 1);
      }
      return html(
        reply,
        page(
          <FolderPage
            chrome={await chrome(request, 'files')}
            system={system}
            prefix={prefix}
            folders={[...folders].map(([name, n]) => ({ name, files: n }))}
            files={files}
            more={cursor !== undefined || all.length > FOLDER_FILES}
          />,
        ),
      );
    },
  );

  app.get<{ Params: { id: string }; Querystring: { path?: string } }>(
    '/console/files/:id/file',
    async (request, reply) => {
      const refused = accessRefusal(request.identity, 'run');
      if (refused !== undefined) throw refused;
      const namespace = request.identity.namespace;
      const system = await getFileSystem(ctx.db, namespace, request.params.id);
      const stored = await getFile(ctx.db, namespace, system.id, request.query.path ?? '');
      const { content, ...file } = stored;
      const text = isText(file.contentType) ? content.subarray(0, SHOWN_BYTES).toString('utf8') : undefined;
      return html(
        reply,
        page(
          <FilePage
            chrome={await chrome(request, 'files')}
            system={system}
            file={file}
            text={text}
            truncated={content.length > SHOWN_BYTES}
          />,
        ),
      );
    },
  );
}
