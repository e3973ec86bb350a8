import { APPROVAL_STATUSES, type ApprovalView, type Maitento } from '@maitento/sdk/client';
import { Option } from 'commander';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { approvalTable, callLine } from '../internal/run-output.js';
import type { RegisterCommand } from './index.js';

const STATUSES = [...APPROVAL_STATUSES, 'all'] as const;

/**
 * What each approval's call would do (see {@link callLine}): the connector of the tool version the run pinned
 * (the newest version for an approval made outside a run). A call whose tool or connector cannot be read is
 * left blank: the list still shows the approvals.
 */
async function callsOf(client: Maitento, approvals: ApprovalView[]): Promise<(string | undefined)[]> {
  const runs = new Map<string, Promise<Map<string, number>>>();
  const connectors = new Map<string, Promise<{ method: string; url: string }>>();
  const pinned = (runId: string) => {
    let found = runs.get(runId);
    if (!found) {
      found = client.interactionRuns
        .get(runId)
        .then((run) => new Map(run.versions.filter((v) => v.kind === 'tool').map((v) => [v.name, v.version])));
      runs.set(runId, found);
    }
    return found;
  };
  const connectorOf = (tool: string, version: number | undefined) => {
    const key = `${tool}@${version ?? 'newest'}`;
    let found = connectors.get(key);
    if (!found) {
      found = client.extops
        .get(tool, version === undefined ? {} : { version })
        .then((extop) => client.connectors.get(extop.connector.name, { version: extop.connector.version }))
        .then((connector) => ({ method: connector.resource.method, url: connector.resource.url }));
      connectors.set(key, found);
    }
    return found;
  };
  return Promise.all(
    approvals.map(async (approval) => {
      try {
        const version = approval.runId ? (await pinned(approval.runId)).get(approval.functionName) : undefined;
        const { method, url } = await connectorOf(approval.functionName, version);
        return callLine(method, url, approval.argumentsJson);
      } catch {
        return undefined;
      }
    }),
  );
}

/** `mt approval-list [--status S] [--run ID]`: the calls waiting for a person (or answered ones). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('approval-list')
    .description('List approvals: the calls waiting for a person (--status all for every one)')
    .addOption(new Option('--status <status>', 'which ones (default Pending)').choices(STATUSES))
    .option('--run <id>', 'only those of this run');
  addJsonOption(addConnectionOptions(command)).action(
    async (flags: ApiFlags & { status?: (typeof STATUSES)[number]; run?: string }) => {
      await withClient(io, flags, async (client) => {
        const approvals = await client.approvals.list({ status: flags.status, runId: flags.run });
        if (flags.json) return printJson(io, approvals);
        if (approvals.length === 0)
          io.err(flags.status && flags.status !== 'Pending' ? 'no approvals' : 'no pending approvals');
        else io.out(approvalTable(approvals, await callsOf(client, approvals)));
      });
    },
  );
};
