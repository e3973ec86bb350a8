import { callInputOf, isPreparedRequest, type PreparedRequestView } from '@maitento/gateway';
import {
  type AuditRecord,
  describeChange,
  getVersion,
  listAudit,
  listTools,
  listVersions,
  type OverviewCharts,
  overviewCharts,
  type RunsOverview,
  runsOverview,
  type VersionSummary,
} from '@maitento/store';
import type { Tool } from '@maitento/lang';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cacheSecrets } from '../calls/tool-credential.js';
import { serverErrors } from '../errors.js';
import { accessRefusal, allowed } from '../plugins/auth.js';
import type { ServerContext } from '../server/context.js';
import type { PageKit } from './automation-routes.js';
import { OverviewChartsSection } from './charts.js';
import { Json } from './json-view.js';
import { type FormState, readSchemaForm, SchemaFields } from './schema-form.js';
import { DataTable } from './table.js';
import { type Chrome, Csrf, fragment, Layout, page, StatusBadge, shownHeader, when } from './views.js';

// The console's overview (its home) and a tool's page with a dry run (docs/console.md, decision 0330).

const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;

/** A time as the runs list's `since`/`until` take it: UTC, to the minute (`2026-12-06T21:05`). */
export function minuteUtc(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16);
}

function runsLink(filters: Record<string, string>): string {
  return `/console/runs?${new URLSearchParams(filters)}`;
}

function waited(since: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(since)) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

interface DeployVersion {
  kind: string;
  name: string;
  version: number;
  action: string;
}

/** The overview: runs by status over 24 h, waits for a person, failures by code, pending approvals, deploys. */
export function OverviewPage(props: {
  chrome: Chrome;
  overview: RunsOverview;
  since: string;
  now: number;
  deploys?: AuditRecord[];
  approvals: boolean;
  /** An admin: a link to the usage page (decision 0395), which GET /v1/usage's role reads. */
  usage?: boolean;
  /** The charts (decision 0356), when they were counted, and the starts of their windows. */
  charts: OverviewCharts;
  chartsAt: number;
  since7d: string;
  since24h: string;
}) {
  const { overview: o, since, now } = props;
  return (
    <Layout title="Overview" chrome={props.chrome}>
      <h1>Overview</h1>
      <p>Runs started in the last 24 hours and 7 days, and what waits now. Each chart and figure links to its runs.</p>
      <OverviewChartsSection
        charts={props.charts}
        now={props.chartsAt}
        since24h={props.since24h}
        since7d={props.since7d}
        approvals={props.approvals}
      />
      <div class="side-by-side">
        <section aria-labelledby="ov-waiting">
          <h2 id="ov-waiting">Waiting for a person</h2>
          <DataTable
            caption="Runs waiting now, by status, with the oldest wait"
            columns={['Status', 'Runs', 'Oldest wait']}
            rows={o.waiting}
            empty="No run waits for a person."
            row={(w) => (
              <tr>
                <td>
                  <StatusBadge status={w.status} />
                </td>
                <td>
                  <a href={runsLink({ status: w.status })}>{w.count}</a>
                </td>
                <td>
                  <a href={`/console/runs/${w.oldestRunId}`}>{w.oldestRunId.slice(0, 8)}</a>, waiting{' '}
                  {waited(w.oldestSince, now)}
                </td>
              </tr>
            )}
          />
        </section>
        <section aria-labelledby="ov-failed">
          <h2 id="ov-failed">Failed in the last 24 h</h2>
          <DataTable
            caption="Failed runs by error code"
            columns={['Code', 'Runs', 'Latest']}
            rows={o.failed}
            empty="No run failed in the last 24 hours."
            row={(f) => (
              <tr>
                <td>
                  <code>{f.code ?? '(no code)'}</code>
                </td>
                <td>
                  <a href={runsLink({ status: 'Failed', since, ...(f.code === null ? {} : { code: f.code }) })}>
                    {f.count}
                  </a>
                </td>
                <td>{when(f.latest)}</td>
              </tr>
            )}
          />
        </section>
        {props.approvals ? (
          <section aria-labelledby="ov-approvals">
            <h2 id="ov-approvals">Approvals pending</h2>
            <p>
              <a href="/console/approvals">
                {o.approvals.count} pending {o.approvals.count === 1 ? 'approval' : 'approvals'}
              </a>
              {o.approvals.oldest ? `, the oldest waiting ${waited(o.approvals.oldest, now)}` : ''}
            </p>
          </section>
        ) : null}
        {props.usage ? (
          <section aria-labelledby="ov-usage">
            <h2 id="ov-usage">Usage and quotas</h2>
            <p>
              <a href="/console/usage" id="ov-usage-link">
                What the runs spent today, by interaction, tool and key, and the namespace's quotas
              </a>
            </p>
          </section>
        ) : null}
        {props.deploys ? (
          <section aria-labelledby="ov-deploys">
            <h2 id="ov-deploys">Recent deploys</h2>
            {props.deploys.length === 0 ? (
              <p>No deploy yet.</p>
            ) : (
              <ul>
                {props.deploys.map((d) => {
                  const all = (d.after?.versions as DeployVersion[] | undefined) ?? [];
                  const shown = all.slice(0, 12).map((v) => `${v.kind} ${v.name} v${v.version} (${v.action})`);
                  return (
                    <li>
                      {when(d.at)}: {shown.join(', ')}
                      {all.length > shown.length ? ` and ${all.length - shown.length} more` : ''}
                    </li>
                  );
                })}
              </ul>
            )}
            <p>
              <a href="/console/audit?action=deploy.applied">Every deploy in the audit log</a>
            </p>
          </section>
        ) : null}
      </div>
    </Layout>
  );
}

/** The tools of the namespace, each linking to its page. */
export function ToolsPage(props: {
  chrome: Chrome;
  tools: { name: string; latestVersion: number; enabled: boolean; callable: boolean }[];
}) {
  return (
    <Layout title="Tools" chrome={props.chrome}>
      <h1>Tools</h1>
      <DataTable
        caption="Tools, by name"
        columns={['Tool', 'Latest version', 'Callable']}
        rows={props.tools}
        empty="No tool is deployed."
        row={(t) => (
          <tr>
            <td>
              <a href={`/console/tools/${encodeURIComponent(t.name)}`}>{t.name}</a>
            </td>
            <td>v{t.latestVersion}</td>
            <td>{t.callable ? 'Yes' : 'No'}</td>
          </tr>
        )}
      />
    </Layout>
  );
}

/** A dry run's answer: the prepared request (masked), or why it could not be prepared. */
export interface DryRun {
  argumentsText: string;
  /** The arguments the generated form gave (shown with the request), when it was that form. */
  fromForm?: boolean;
  /** The generated form's typed values and refused fields. */
  form?: FormState;
  request?: PreparedRequestView;
  error?: { code: string; message: string };
}

/** The form fields' prefix of a tool's arguments (`arg/request/amount`). */
const ARG = 'arg';

/** Two versions compared: what changed in words (the deploy plan's diff) and the two versions' definitions. */
export interface VersionDiff {
  from: number;
  to: number;
  changed: string[];
  breaking: string[];
  before: unknown;
  after: unknown;
}

/** The dry run's result region (swapped in by htmx; the whole page without JavaScript). */
export function DryRunResult(props: { dry?: DryRun; secretName?: string }) {
  const { dry } = props;
  return (
    <section id="dry-run-result" aria-labelledby="dry-run-result-heading" tabindex={-1}>
      <h2 id="dry-run-result-heading">The request that would be sent</h2>
      {dry === undefined ? (
        <p>Nothing prepared yet: enter the arguments and choose Prepare.</p>
      ) : dry.error ? (
        <p role="alert" class="error" id="arguments-error">
          {dry.error.message} ({dry.error.code})
        </p>
      ) : dry.request ? (
        <>
          <p role="status">Prepared, not sent.</p>
          {dry.fromForm ? (
            <p>
              The form's arguments: <code id="form-arguments">{dry.argumentsText}</code>
            </p>
          ) : null}
          <p class="request-line">
            {dry.request.method} {dry.request.url}
          </p>
          {Object.keys(dry.request.headers).length > 0 ? (
            <table>
              <caption>Headers (secrets masked)</caption>
              <tbody>
                {Object.entries(dry.request.headers).map(([k, v]) => (
                  <tr>
                    <th scope="row">{k}</th>
                    <td>{shownHeader(v, props.secretName)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          {dry.request.body !== undefined ? (
            <>
              <h3>Body</h3>
              <Json value={dry.request.body} label="Body of the prepared request" />
            </>
          ) : null}
        </>
      ) : null}
    </section>
  );
}

/** Two versions compared: the deploy plan's words (breaking changes marked) and both definitions. */
export function VersionDiffView(props: { diff: VersionDiff }) {
  const { diff } = props;
  const breaking = new Set(diff.breaking);
  return (
    <section id="version-diff" aria-labelledby="diff-heading" tabindex={-1}>
      <h3 id="diff-heading">
        From v{diff.from} to v{diff.to}
      </h3>
      {diff.from === diff.to ? (
        <p>The same version.</p>
      ) : diff.changed.length === 0 ? (
        <p>Nothing changed that a deploy plan shows.</p>
      ) : (
        <ul>
          {diff.changed.map((c) => (
            <li>
              {c}
              {breaking.has(c) ? (
                <>
                  {' '}
                  <span class="badge s-bad">breaking</span>
                </>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      <div class="side-by-side">
        <details>
          <summary>What the model saw in v{diff.from}</summary>
          <Json value={diff.before} label={`The definition of version ${diff.from}`} />
        </details>
        <details>
          <summary>What the model sees in v{diff.to}</summary>
          <Json value={diff.after} label={`The definition of version ${diff.to}`} />
        </details>
      </div>
    </section>
  );
}

/** A tool's page: its version, connector and model-facing definition, versions and their diff, (admin) a dry run. */
export function ToolPage(props: {
  chrome: Chrome;
  name: string;
  version: number;
  enabled: boolean;
  connector?: { name: string; version: number };
  description?: string;
  requiresApproval: boolean;
  definition?: unknown;
  canDryRun: boolean;
  dry?: DryRun;
  secretName?: string;
  versions: VersionSummary[];
  diff?: VersionDiff;
}) {
  const path = `/console/tools/${encodeURIComponent(props.name)}`;
  const action = `${path}/dry-run`;
  const parameters = (props.definition as { parameters?: unknown } | undefined)?.parameters;
  const newest = props.versions[0]?.version ?? props.version;
  const from = props.diff?.from ?? props.versions[1]?.version ?? newest;
  const to = props.diff?.to ?? newest;
  return (
    <Layout title={`Tool ${props.name}`} chrome={props.chrome} live={props.canDryRun ? 'poll' : undefined}>
      <h1>Tool {props.name}</h1>
      <dl>
        <dt>Version</dt>
        <dd>
          v{props.version} ({props.enabled ? 'enabled' : 'disabled'})
        </dd>
        {props.connector ? (
          <>
            <dt>Connector</dt>
            <dd>
              {props.connector.name} v{props.connector.version}
            </dd>
          </>
        ) : null}
        <dt>Needs approval</dt>
        <dd>{props.requiresApproval ? 'Yes' : 'No'}</dd>
        {props.description ? (
          <>
            <dt>Guidance</dt>
            <dd>{props.description}</dd>
          </>
        ) : null}
        <dt>Runs</dt>
        <dd>
          <a href={`/console/runs?${new URLSearchParams({ tool: props.name })}`}>The runs that called it</a>
        </dd>
      </dl>
      {props.definition !== undefined ? (
        <details>
          <summary>What the model sees (its definition)</summary>
          <Json value={props.definition} label={`The model-facing definition of ${props.name}`} />
        </details>
      ) : null}
      <section aria-labelledby="versions-heading">
        <h2 id="versions-heading">Versions</h2>
        <DataTable
          caption={`Versions of ${props.name}, newest first`}
          columns={['Version', 'Deployed', 'By', 'State']}
          rows={props.versions}
          row={(v) => (
            <tr>
              <td>v{v.version}</td>
              <td>{when(v.createdAt)}</td>
              <td>{v.deployedBy ?? ''}</td>
              <td>{v.enabled ? 'enabled' : 'disabled'}</td>
            </tr>
          )}
        />
        {props.versions.length > 1 ? (
          <form method="get" action={path} class="compare">
            <label for="diff-from">Compare version</label>
            <select id="diff-from" name="from">
              {props.versions.map((v) => (
                <option value={String(v.version)} selected={v.version === from}>
                  v{v.version}
                </option>
              ))}
            </select>
            <label for="diff-to">with version</label>
            <select id="diff-to" name="to">
              {props.versions.map((v) => (
                <option value={String(v.version)} selected={v.version === to}>
                  v{v.version}
                </option>
              ))}
            </select>
            <button type="submit">Compare</button>
          </form>
        ) : null}
        {props.diff ? <VersionDiffView diff={props.diff} /> : null}
      </section>
      {props.canDryRun ? (
        <>
          <h2>Dry run</h2>
          <p>
            Prepares the call as an agent's would be (the namespace's secrets, name resolution and the address check)
            and shows the request without sending it.
          </p>
          <form
            method="post"
            action={action}
            hx-post={action}
            hx-target="#dry-run-result"
            hx-swap="outerHTML"
            class="schema-form"
            aria-labelledby="form-heading"
          >
            <h3 id="form-heading">The arguments, field by field</h3>
            <Csrf token={props.chrome.csrfToken} />
            <input type="hidden" name="mode" value="form" />
            <SchemaFields schema={parameters} prefix={ARG} state={props.dry?.form} />
            <button type="submit" class="primary">
              Prepare these arguments without sending
            </button>
          </form>
          <form
            method="post"
            action={action}
            hx-post={action}
            hx-target="#dry-run-result"
            hx-swap="outerHTML"
            aria-labelledby="json-heading"
          >
            <h3 id="json-heading">Or as JSON</h3>
            <Csrf token={props.chrome.csrfToken} />
            <label for="arguments">Arguments (JSON, as the model would give them)</label>
            <textarea
              id="arguments"
              name="arguments"
              rows={8}
              aria-describedby={props.dry?.error ? 'arguments-error' : undefined}
            >
              {props.dry?.argumentsText ?? '{}'}
            </textarea>
            <button type="submit" class="primary">
              Prepare, do not send
            </button>
          </form>
          <DryRunResult dry={props.dry} secretName={props.secretName} />
        </>
      ) : (
        <p>A dry run is an admin key's, as calling a tool by hand is.</p>
      )}
    </Layout>
  );
}

/** How long the overview's charts are reused before they are counted again (decision 0356): they are by the hour. */
export const OVERVIEW_CHARTS_MAX_AGE_MS = 60_000;
/** The most namespaces (and runner keys) whose charts are kept. */
const OVERVIEW_CHARTS_KEPT = 500;

/** The overview's charts as counted at `at` (epoch ms), over the windows starting `since7d` and `since24h`. */
interface CountedCharts {
  at: number;
  since7d: string;
  since24h: string;
  charts: Promise<OverviewCharts>;
}

/** The overview and the tools' pages (decision 0330). */
export function exploreRoutes(app: FastifyInstance, ctx: ServerContext, kit: PageKit): void {
  const { chrome, html } = kit;
  // The charts aggregate up to a week of runs (100 000 rows take hundreds of ms on a loaded machine): counted at
  // most once a minute per namespace (and runner key), the same figures for everyone who loads the page meanwhile.
  const counted = new Map<string, CountedCharts>();
  function chartsOf(namespace: string, mine: { startedByKeyId?: string }, now: number): CountedCharts {
    const key = `${namespace}\u0000${mine.startedByKeyId ?? ''}`;
    const kept = counted.get(key);
    if (kept !== undefined && now - kept.at < OVERVIEW_CHARTS_MAX_AGE_MS) return kept;
    const since7d = minuteUtc(Math.floor(now / HOUR_MS) * HOUR_MS - 167 * HOUR_MS);
    const since24h = minuteUtc(now - DAY_MS);
    const charts = overviewCharts(ctx.db, namespace, { since7d: `${since7d}Z`, since24h: `${since24h}Z`, ...mine });
    const entry = { at: now, since7d, since24h, charts };
    counted.delete(key);
    counted.set(key, entry);
    if (counted.size > OVERVIEW_CHARTS_KEPT) counted.delete(counted.keys().next().value as string);
    // A count that failed is not kept: the next request counts again.
    charts.catch(() => {
      if (counted.get(key) === entry) counted.delete(key);
    });
    return entry;
  }

  app.get('/console/overview', async (request, reply) => {
    const now = Date.now();
    const since = minuteUtc(now - DAY_MS);
    const { identity } = request;
    const mine = identity.role === 'runner' ? { startedByKeyId: identity.keyId } : {};
    const counting = chartsOf(identity.namespace, mine, now);
    const [overview, charts] = await Promise.all([
      runsOverview(ctx.db, identity.namespace, { since: `${since}Z`, ...mine }),
      counting.charts,
    ]);
    const deploys = allowed(identity, 'admin')
      ? (await listAudit(ctx.db, identity.namespace, { action: 'deploy.applied', limit: 5 })).entries
      : undefined;
    return html(
      reply,
      page(
        <OverviewPage
          chrome={await chrome(request, 'overview')}
          overview={overview}
          since={since}
          now={now}
          deploys={deploys}
          approvals={identity.role !== 'runner'}
          usage={allowed(identity, 'admin')}
          charts={charts}
          chartsAt={counting.at}
          since7d={counting.since7d}
          since24h={counting.since24h}
        />,
      ),
    );
  });

  app.get('/console/tools', async (request, reply) => {
    const tools = await listTools(ctx.db, request.identity.namespace);
    return html(reply, page(<ToolsPage chrome={await chrome(request, 'tools')} tools={tools} />));
  });

  async function toolPage(
    request: FastifyRequest,
    reply: FastifyReply,
    name: string,
    dry?: DryRun,
    status = 200,
    compare?: { from?: string; to?: string },
  ) {
    const namespace = request.identity.namespace;
    const found = await ctx.cache.findVersion(namespace, 'tool', name);
    if (found === undefined) throw serverErrors.create('api:request:not-found', { method: 'GET', url: request.url });
    const stored = await getVersion(ctx.db, namespace, 'tool', name, found.version);
    const versions = await listVersions(ctx.db, namespace, 'tool', name);
    let diff: VersionDiff | undefined;
    const from = Number(compare?.from);
    const to = Number(compare?.to);
    const known = new Set(versions.map((v) => v.version));
    if (known.has(from) && known.has(to)) {
      // The deploy plan's own comparison (`describeChange`): the same words `mt deploy --plan` prints.
      const [a, b] = await Promise.all([
        getVersion(ctx.db, namespace, 'tool', name, from),
        getVersion(ctx.db, namespace, 'tool', name, to),
      ]);
      const summary = describeChange(
        { resource: a.resource, pins: a.pins, definition: a.definition },
        { resource: b.resource, pins: b.pins, ...(b.definition ? { definition: b.definition } : {}) },
      );
      diff = { from, to, ...summary, before: a.definition ?? a.resource, after: b.definition ?? b.resource };
    }
    const pin = stored.pins.find((p) => p.kind === 'connector');
    const tool = stored.resource;
    return html(
      reply,
      page(
        <ToolPage
          chrome={await chrome(request, 'tools')}
          name={name}
          version={stored.version}
          enabled={stored.enabled}
          connector={pin ? { name: pin.name, version: pin.version } : undefined}
          description={tool.guidance}
          requiresApproval={tool.requiresApproval === true}
          definition={stored.definition}
          canDryRun={allowed(request.identity, 'admin')}
          dry={dry}
          secretName={tool.auth?.secret}
          versions={versions}
          diff={diff}
        />,
      ),
      status,
    );
  }

  app.get<{ Params: { name: string }; Querystring: { from?: string; to?: string } }>(
    '/console/tools/:name',
    async (request, reply) => toolPage(request, reply, request.params.name, undefined, 200, request.query),
  );

  // The dry run: the REST call's preparation (`callInputOf`) and the gateway's `prepare`, the step an approval's
  // request comes from; nothing is sent. An admin's, as `POST /v1/extops/{name}/call` is.
  app.post<{ Params: { name: string }; Body: Record<string, string | undefined> }>(
    '/console/tools/:name/dry-run',
    async (request, reply) => {
      const refused = accessRefusal(request.identity, 'admin');
      if (refused !== undefined) throw refused;
      const namespace = request.identity.namespace;
      const name = request.params.name;
      const found = await ctx.cache.findVersion<Tool>(namespace, 'tool', name);
      const secretName = found?.resource.auth?.secret;
      let dry: DryRun | undefined;
      let args: unknown;
      let argumentsText = request.body.arguments ?? '{}';
      let form: FormState | undefined;
      if (request.body.mode === 'form') {
        // The generated form: its fields read back by the tool's model-facing schema, as JSON arguments.
        const definition = found ? (await getVersion(ctx.db, namespace, 'tool', name, found.version)).definition : null;
        const read = readSchemaForm(definition?.parameters, request.body, ARG);
        args = read.value;
        form = read;
        argumentsText = JSON.stringify(read.value);
        const refused = Object.values(read.errors);
        if (refused.length > 0) {
          const e = serverErrors.create('api:request:invalid', { detail: refused.join(' ') });
          dry = { argumentsText, fromForm: true, form: read, error: { code: e.code, message: e.message } };
        } else {
          dry = undefined;
        }
      } else {
        try {
          args = JSON.parse(argumentsText);
        } catch (error) {
          args = undefined;
          const e = serverErrors.create('api:request:invalid', {
            detail: `the arguments are not JSON: ${(error as Error).message}`,
          });
          dry = { argumentsText, error: { code: e.code, message: e.message } };
        }
      }
      const fromForm = request.body.mode === 'form';
      dry ??= await (async (): Promise<DryRun> => {
        try {
          const { tool, connector } = await ctx.cache.loadCallableTool(namespace, name);
          const input = await callInputOf({
            tool: tool.resource,
            connector: connector.resource,
            arguments: args,
            readSecret: cacheSecrets(ctx.cache, namespace),
            caller: namespace,
          });
          const prepared = await ctx.gateway.prepare(input);
          if (isPreparedRequest(prepared)) return { argumentsText, fromForm, request: prepared.view };
          return {
            argumentsText,
            fromForm,
            error: { code: prepared.code ?? 'api:gateway:request-invalid', message: prepared.error ?? 'not prepared' },
          };
        } catch (error) {
          const e = error as { code?: string; message?: string };
          if (typeof e.code !== 'string' || !e.code.startsWith('api:')) throw error;
          return { argumentsText, fromForm, error: { code: e.code, message: e.message ?? e.code } };
        }
      })();
      if (form !== undefined) dry.form = form;
      const status = dry.error ? 422 : 200;
      if (request.headers['hx-request'] === 'true') {
        // htmx swaps only a 2xx answer by default: the refusal is shown too, so the fragment answers 200.
        return html(reply, fragment(<DryRunResult dry={dry} secretName={secretName} />));
      }
      return toolPage(request, reply, name, dry, status);
    },
  );
}
