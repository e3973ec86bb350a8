import type { ResourceSummary, VersionInfo } from '@maitento/sdk';
import { type Io, printJson } from './output.js';
import { formatTable } from './table.js';

/** Prints connectors or tools: JSON, or a NAME / LATEST / ENABLED table (a note on stderr when empty). */
export function printSummaries(io: Io, list: ResourceSummary[], json: boolean | undefined, noun: string): void {
  if (json) printJson(io, list);
  else if (list.length === 0) io.err(`no ${noun} deployed yet`);
  else
    io.out(
      formatTable(
        ['NAME', 'LATEST', 'ENABLED'],
        list.map((item) => [item.name, item.latestVersion, item.enabled]),
      ),
    );
}

/** Prints versions: the `{ version, enabled, createdAt }` array as JSON, or a table. */
export function printVersions(io: Io, versions: VersionInfo[], json: boolean | undefined): void {
  if (json)
    printJson(
      io,
      versions.map(({ version, enabled, createdAt, deployedBy }) => ({ version, enabled, createdAt, deployedBy })),
    );
  else
    io.out(
      formatTable(
        ['VERSION', 'ENABLED', 'CREATED', 'DEPLOYED BY'],
        versions.map((v) => [v.version, v.enabled, v.createdAt, v.deployedBy ?? '-']),
      ),
    );
}
