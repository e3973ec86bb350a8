import type { DeployChange, DeployPlan } from '@maitento/sdk';
import { formatTable } from './table.js';

/**
 * Formats a deploy plan as a table, one row per resource, with what changed under each row:
 * `~` for a change, `!` for a change that can break a working agent. A resource deleted by `--prune` is a `delete`
 * row (with the runs that still pin it); one the repo no longer holds, without `--prune`, a `not in repo` row.
 */
export function formatPlan(plan: DeployPlan): string {
  const absent = plan.absent ?? [];
  const rows: string[][] = [
    ...plan.changes.map((change) => [change.kind, change.name, change.action, versionText(change)]),
    ...absent.map((resource) => [resource.kind, resource.name, 'not in repo', String(resource.version)]),
  ];
  const lines = formatTable(['KIND', 'NAME', 'ACTION', 'VERSION'], rows).split('\n');
  const out = [lines[0]];
  plan.changes.forEach((change, index) => {
    out.push(lines[index + 1]);
    const breaking = new Set(change.breaking ?? []);
    for (const item of change.changed ?? []) {
      out.push(breaking.has(item) ? `    ! ${item} (breaking)` : `    ~ ${item}`);
    }
    // A breaking change the server did not also list under `changed` is still shown.
    for (const item of breaking) if (!(change.changed ?? []).includes(item)) out.push(`    ! ${item} (breaking)`);
    if (change.pinnedBy !== undefined && change.pinnedBy.length > 0) {
      out.push(`    ~ pinned by run ${change.pinnedBy.join(', ')}: its versions stay until the run ends`);
    }
  });
  absent.forEach((_, index) => {
    out.push(lines[plan.changes.length + index + 1]);
  });
  return out.join('\n');
}

/** One line on what the deploy did (or would do, for a dry run). */
export function planSummary(plan: DeployPlan): string {
  const count = (action: DeployChange['action']) => plan.changes.filter((c) => c.action === action).length;
  const breaking = plan.changes.reduce((sum, c) => sum + (c.breaking?.length ?? 0), 0);
  const warning = breaking > 0 ? `; ${breaking} breaking change(s) marked with !` : '';
  const deleted = count('delete');
  const absent = plan.absent?.length ?? 0;
  const hint = absent > 0 ? `; ${absent} not in the repo, kept (mt deploy --prune deletes them)` : '';
  if (!plan.applied) {
    const deleting = deleted > 0 ? `, ${deleted} to delete` : '';
    return `dry run: ${count('create')} to create, ${count('update')} to update${deleting}, ${count('unchanged')} unchanged; nothing was stored${warning}${hint}`;
  }
  const deleting = deleted > 0 ? `, ${deleted} deleted` : '';
  return `deployed: ${count('create')} created, ${count('update')} updated${deleting}, ${count('unchanged')} unchanged${warning}${hint}`;
}

function versionText(change: DeployChange): string {
  if (change.action === 'update' && change.previousVersion !== undefined) {
    return `${change.previousVersion} → ${change.version}`;
  }
  return String(change.version);
}
