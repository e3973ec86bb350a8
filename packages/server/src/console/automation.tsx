import type { Trigger } from '@maitento/lang';
import type { Connection, ScheduleState, ScheduleTick } from '@maitento/sdk';
import type { TriggerDelivery, WebhookDelivery, WebhookEndpoint } from '@maitento/store';
import { DataTable } from './table.js';
import { type Chrome, Csrf, Layout, StatusBadge, when } from './views.js';

// The console's pages of what runs without a person starting it and what it reaches for (decision 0305):
// connections of end users, schedules, inbound webhooks (triggers) and outbound webhooks. Read-only but for their
// actions (delete a connection, pause and resume a schedule, send a test event), each a form with the CSRF token.

/** A line said after an action (`role="status"`). */
function Notice(props: { text?: string }) {
  return props.text ? <p role="status">{props.text}</p> : null;
}

/** The connections of end users, by provider and end user (never a token); Delete revokes and deletes one. */
export function ConnectionsPage(props: {
  chrome: Chrome;
  connections: Connection[];
  canDelete: boolean;
  notice?: string;
}) {
  return (
    <Layout title="Connections" chrome={props.chrome}>
      <h1>Connections</h1>
      <p>
        End users' accounts at auth providers, which OAuth2 connectors call with. A connection's tokens are never shown.
      </p>
      <Notice text={props.notice} />
      <DataTable
        id="connections"
        caption="Connections by provider and end user"
        columns={['Provider', 'End user', 'Status', 'Scopes', 'Times', props.canDelete ? 'Action' : null]}
        rows={props.connections}
        empty="No end user has connected."
        row={(c) => (
          <tr id={`connection-${c.id}`}>
            <td>{c.provider}</td>
            <th scope="row">{c.endUser}</th>
            <td>
              <StatusBadge status={c.status} />
            </td>
            <td>{c.scopes.join(' ')}</td>
            <td>
              Connected {when(c.createdAt)}, updated {when(c.updatedAt)}
              {c.accessTokenExpiresAt ? `, access until ${when(c.accessTokenExpiresAt)}` : ''}
              {c.hasRefreshToken ? ' (refreshable)' : ''}
            </td>
            {props.canDelete ? (
              <td>
                <form method="post" action={`/console/connections/${c.id}/delete`}>
                  <Csrf token={props.chrome.csrfToken} />
                  <button type="submit" class="danger">
                    Delete {c.endUser} at {c.provider}
                  </button>
                </form>
              </td>
            ) : null}
          </tr>
        )}
      />
    </Layout>
  );
}

/** A schedule's state in a word: Ticking, Paused, or Disabled (its `.mtr` says `enabled = false`). */
function scheduleState(s: ScheduleState): string {
  if (!s.enabled) return 'Disabled';
  return s.paused ? 'Paused' : 'Ticking';
}

/** Pause or Resume, for an admin. */
function PauseForm(props: { schedule: ScheduleState; csrfToken: string; from: 'list' | 'page' }) {
  const { schedule } = props;
  const action = schedule.paused ? 'resume' : 'pause';
  return (
    <form method="post" action={`/console/schedules/${encodeURIComponent(schedule.name)}/${action}`}>
      <Csrf token={props.csrfToken} />
      <input type="hidden" name="from" value={props.from} />
      <button type="submit">
        {schedule.paused ? 'Resume' : 'Pause'} {schedule.name}
      </button>
    </form>
  );
}

/** The schedules of the namespace with their last and next ticks; an admin pauses and resumes them. */
export function SchedulesPage(props: {
  chrome: Chrome;
  schedules: ScheduleState[];
  canPause: boolean;
  notice?: string;
}) {
  return (
    <Layout title="Schedules" chrome={props.chrome}>
      <h1>Schedules</h1>
      <Notice text={props.notice} />
      <DataTable
        id="schedules"
        caption="Schedules, their last and next ticks"
        columns={['Name', 'When', 'State', 'Last tick', 'Next tick', props.canPause ? 'Action' : null]}
        rows={props.schedules}
        empty="No schedule is deployed."
        row={(s) => (
          <tr id={`schedule-${s.name}`}>
            <th scope="row">
              <a href={`/console/schedules/${encodeURIComponent(s.name)}`}>{s.name}</a>
            </th>
            <td>
              <code>{s.cron}</code> ({s.timezone}), runs {s.interaction}
            </td>
            <td>
              <StatusBadge status={scheduleState(s)} />
            </td>
            <td>{s.lastTick ? when(s.lastTick) : 'none yet'}</td>
            <td>{s.nextTick ? when(s.nextTick) : 'none'}</td>
            {props.canPause ? (
              <td>
                <PauseForm schedule={s} csrfToken={props.chrome.csrfToken} from="list" />
              </td>
            ) : null}
          </tr>
        )}
      />
    </Layout>
  );
}

/** One schedule: its settings, Pause or Resume (an admin), and its latest ticks and what became of each. */
export function SchedulePage(props: {
  chrome: Chrome;
  schedule: ScheduleState;
  ticks: ScheduleTick[];
  canPause: boolean;
  notice?: string;
}) {
  const s = props.schedule;
  return (
    <Layout title={`Schedule ${s.name}`} chrome={props.chrome}>
      <h1>Schedule {s.name}</h1>
      <Notice text={props.notice} />
      <dl>
        <dt>State</dt>
        <dd>
          <StatusBadge status={scheduleState(s)} />
        </dd>
        <dt>Interaction</dt>
        <dd>{s.interaction}</dd>
        <dt>When</dt>
        <dd>
          <code>{s.cron}</code> ({s.timezone})
        </dd>
        <dt>Overlap, missed ticks</dt>
        <dd>
          {s.overlap}, {s.missed}
        </dd>
        <dt>Version</dt>
        <dd>{s.version}</dd>
        <dt>Last tick</dt>
        <dd>{s.lastTick ? when(s.lastTick) : 'none yet'}</dd>
        <dt>Next tick</dt>
        <dd>{s.nextTick ? when(s.nextTick) : 'none'}</dd>
      </dl>
      {props.canPause ? <PauseForm schedule={s} csrfToken={props.chrome.csrfToken} from="page" /> : null}
      <h2>Ticks</h2>
      <DataTable
        id="ticks"
        caption={`The latest ${props.ticks.length} ticks, newest first`}
        columns={['Tick', 'Version', 'Outcome', 'Run']}
        rows={props.ticks}
        empty="No tick recorded yet."
        row={(t) => (
          <tr>
            <th scope="row">{when(t.tick)}</th>
            <td>{t.version}</td>
            <td>
              <StatusBadge status={t.status} />
              {t.detail ? ` ${t.detail}` : ''}
            </td>
            <td>{t.runId ? <a href={`/console/runs/${t.runId}`}>{t.runId.slice(0, 8)}</a> : 'none'}</td>
          </tr>
        )}
      />
    </Layout>
  );
}

/** A trigger as the console lists it: its latest version and the URL senders post to. */
export interface TriggerItem {
  name: string;
  version: number;
  trigger: Trigger;
  url: string;
}

/** The inbound webhooks of the namespace: the URL each takes deliveries at, and what it starts. */
export function TriggersPage(props: { chrome: Chrome; triggers: TriggerItem[] }) {
  return (
    <Layout title="Triggers" chrome={props.chrome}>
      <h1>Triggers</h1>
      <p>Inbound webhooks: each delivery to a trigger's URL, verified with its secret, starts a run.</p>
      <DataTable
        id="triggers"
        caption="Triggers and their URLs"
        columns={['Name', 'URL', 'Starts', 'State']}
        rows={props.triggers}
        empty="No trigger is deployed."
        row={(t) => (
          <tr id={`trigger-${t.name}`}>
            <th scope="row">
              <a href={`/console/triggers/${encodeURIComponent(t.name)}`}>{t.name}</a>
            </th>
            <td>{t.trigger.verify === undefined ? 'none (it follows runs)' : <code>{t.url}</code>}</td>
            <td>
              {t.trigger.interaction}{' '}
              {t.trigger.verify === undefined
                ? `(when a run of ${t.trigger.on?.runCompleted ?? '?'} ends)`
                : `(signed the ${t.trigger.verify.style} way)`}
            </td>
            <td>{t.trigger.enabled ? 'Enabled' : 'Disabled'}</td>
          </tr>
        )}
      />
    </Layout>
  );
}

/** One trigger: its URL and settings, the deliveries refused before anything was stored, and its delivery log. */
export function TriggerPage(props: {
  chrome: Chrome;
  item: TriggerItem;
  deliveries: TriggerDelivery[];
  rejected: Record<string, number>;
}) {
  const { item } = props;
  const rejected = Object.entries(props.rejected);
  return (
    <Layout title={`Trigger ${item.name}`} chrome={props.chrome}>
      <h1>Trigger {item.name}</h1>
      <dl>
        {item.trigger.verify === undefined ? null : (
          <>
            <dt>URL</dt>
            <dd>
              <code id="trigger-url">{item.url}</code>
            </dd>
          </>
        )}
        <dt>Starts</dt>
        <dd>{item.trigger.interaction}</dd>
        {item.trigger.verify === undefined ? (
          <>
            <dt>On</dt>
            <dd id="trigger-on">
              each run of {item.trigger.on?.runCompleted ?? '?'} that ends{' '}
              {(item.trigger.on?.statuses ?? ['Completed']).join(' or ')}
            </dd>
          </>
        ) : (
          <>
            <dt>Verified</dt>
            <dd>
              the {item.trigger.verify.style} way, with the secret {item.trigger.verify.secret}
            </dd>
          </>
        )}
        <dt>Version</dt>
        <dd>
          {item.version} ({item.trigger.enabled ? 'enabled' : 'disabled'})
        </dd>
        <dt>Refused unstored</dt>
        <dd id="rejected">
          {rejected.length === 0 ? 'none' : rejected.map(([reason, count]) => `${count} for ${reason}`).join(', ')}
        </dd>
      </dl>
      <h2>Deliveries</h2>
      <DataTable
        id="deliveries"
        caption={`The latest ${props.deliveries.length} deliveries, newest first`}
        columns={['Received', 'Event id', 'Outcome', 'Run']}
        rows={props.deliveries}
        empty="No delivery recorded yet."
        row={(d) => (
          <tr>
            <td>{when(d.receivedAt)}</td>
            <th scope="row">{d.eventId}</th>
            <td>
              <StatusBadge status={d.status} />
              {d.answerStatus === null ? '' : ` HTTP ${d.answerStatus}`}
              {d.code ? ` [${d.code}]` : ''}
              {d.detail ? `: ${d.detail}` : ''}
            </td>
            <td>{d.runId ? <a href={`/console/runs/${d.runId}`}>{d.runId.slice(0, 8)}</a> : 'none'}</td>
          </tr>
        )}
      />
    </Layout>
  );
}

/** The outbound webhook endpoints of the namespace (an admin's): their events and state. */
export function WebhooksPage(props: { chrome: Chrome; endpoints: WebhookEndpoint[] }) {
  return (
    <Layout title="Webhooks" chrome={props.chrome}>
      <h1>Webhooks</h1>
      <p>Endpoints that receive the namespace's events, signed (their secrets are never shown).</p>
      <DataTable
        id="webhooks"
        caption="Webhook endpoints, oldest first"
        columns={['URL', 'Events', 'State']}
        rows={props.endpoints}
        empty="No webhook endpoint."
        row={(e) => (
          <tr id={`webhook-${e.id}`}>
            <th scope="row">
              <a href={`/console/webhooks/${e.id}`}>{e.url}</a>
              {e.description ? <small> {e.description}</small> : null}
            </th>
            <td>{e.events.length === 0 ? 'every event' : e.events.join(', ')}</td>
            <td>{e.enabled ? 'Enabled' : 'Disabled'}</td>
          </tr>
        )}
      />
    </Layout>
  );
}

/** One endpoint: its settings, "Send a test event", and its delivery log. */
export function WebhookPage(props: {
  chrome: Chrome;
  endpoint: WebhookEndpoint;
  deliveries: WebhookDelivery[];
  notice?: string;
}) {
  const e = props.endpoint;
  return (
    <Layout title="Webhook endpoint" chrome={props.chrome}>
      <h1>Webhook endpoint</h1>
      <Notice text={props.notice} />
      <dl>
        <dt>URL</dt>
        <dd>
          <code>{e.url}</code>
        </dd>
        {e.description ? (
          <>
            <dt>Description</dt>
            <dd>{e.description}</dd>
          </>
        ) : null}
        <dt>Events</dt>
        <dd>{e.events.length === 0 ? 'every event' : e.events.join(', ')}</dd>
        <dt>State</dt>
        <dd>{e.enabled ? 'Enabled' : 'Disabled'}</dd>
        <dt>Created</dt>
        <dd>{when(e.createdAt)}</dd>
        {e.previousSecretUntil ? (
          <>
            <dt>Previous secret signs until</dt>
            <dd>{when(e.previousSecretUntil)}</dd>
          </>
        ) : null}
      </dl>
      <form method="post" action={`/console/webhooks/${e.id}/test`}>
        <Csrf token={props.chrome.csrfToken} />
        <button type="submit">Send a test event</button>
      </form>
      <h2>Deliveries</h2>
      <DataTable
        id="deliveries"
        caption={`The latest ${props.deliveries.length} deliveries, newest first`}
        columns={['Event', 'Status', 'Attempts', 'Last answer']}
        rows={props.deliveries}
        empty="No delivery yet."
        row={(d) => (
          <tr id={`delivery-${d.id}`}>
            <th scope="row">
              {d.eventType} <small>{when(d.createdAt)}</small>
            </th>
            <td>
              <StatusBadge status={d.status} />
              {d.deliveredAt ? ` ${when(d.deliveredAt)}` : ''}
              {d.nextAttemptAt ? ` again at ${when(d.nextAttemptAt)}` : ''}
            </td>
            <td>{d.attempts}</td>
            <td>
              {d.lastStatus === null ? '' : `HTTP ${d.lastStatus}`}
              {d.lastError ? ` ${d.lastError}` : ''}
            </td>
          </tr>
        )}
      />
    </Layout>
  );
}
