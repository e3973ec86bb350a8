import { resolve } from 'node:path';
import { cliErrors } from '../errors.js';
import { ExitCode } from '../internal/exit-codes.js';
import { CommandExit, printJson, reportError } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

interface ImportFlags {
  out: string;
  name?: string;
  tags?: string;
  excludeTags?: string;
  operations?: string;
  excludeOperations?: string;
  serverUrl?: string;
  approval: boolean;
  dryRun?: boolean;
  check?: boolean;
  force?: boolean;
  json?: boolean;
}

const list = (value: string | undefined) =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');

const ACTION_WORDS: Record<string, string> = {
  create: 'created',
  update: 'updated',
  merge: 'merged (hand edits kept)',
  delete: 'deleted (operation dropped)',
  force: 'overwritten (--force)',
  conflict: 'CONFLICT',
};

/**
 * Errors that refuse what was given (the document or a flag), exit 2 as the issue asks; a document that cannot be
 * read at all (no file, a network error, a limit) stays exit 1, as for every command.
 */
const REFUSED = new Set([
  'api:import:document-invalid',
  'api:import:swagger-2',
  'api:import:ref-external',
  'api:import:ref-outside',
  'api:import:schema-too-large',
  'api:import:server-relative',
  'api:import:server-missing',
  'api:import:filter-unknown',
  'api:import:name-invalid',
]);

/** `mt import openapi FILE_OR_URL`: connectors and tools from an OpenAPI document. */
export const register: RegisterCommand = (program, io) => {
  const group = program.command('import').description('Generate config repo files from another description of an API');
  group
    .command('openapi')
    .description('Generate a connector and a tool per operation of an OpenAPI 3.x document (a file or an http(s) URL)')
    .argument('<source>', 'the OpenAPI document: a YAML or JSON file, or an http(s) URL')
    .option('--out <dir>', 'the config repo to write into', '.')
    .option('--name <name>', "prefix of every generated name (default: the document's info.title in kebab case)")
    .option('--tags <tags>', 'only operations with one of these tags (comma-separated)')
    .option('--exclude-tags <tags>', 'leave out operations with one of these tags')
    .option('--operations <ids>', 'only these operationIds (comma-separated)')
    .option('--exclude-operations <ids>', 'leave out these operationIds')
    .option('--server-url <url>', "the API's base URL (default: the document's first server)")
    .option('--no-approval', 'do not make POST, PUT, PATCH and DELETE tools require approval')
    .option('--dry-run', 'write nothing; print a unified diff of what would change')
    .option('--check', 'write nothing; exit 1 when the files differ from what an import would write')
    .option('--force', 'take the document where a hand edit and a change of the document collide')
    .option('--json', 'print { "name", "operations", "changes", "warnings" } on stdout')
    .addHelpText(
      'after',
      `
Writes connectors/open-api/<name>.mtr and external-operations/open-api/<name>.mtr for each operation, and
.mt-import/<prefix>.json, the record a re-import merges against: a property you edited by hand stays, a
property you did not takes the document's; both changed is a conflict (nothing written, exit 3) unless
--force. See docs/import-openapi.md.

Exit codes: 0 done (or nothing to change); 1 with --check, files that differ, or a document that cannot
be read; 2 a document refused (invalid, Swagger 2.0, a $ref to another host, a relative server without
--server-url) or usage (also an unknown --tags or --operations name); 3 a conflict with a hand edit.`,
    )
    .action(async (source: string, flags: ImportFlags) => {
      const { loadDocument } = await import('../internal/openapi/load.js');
      const { generate } = await import('../internal/openapi/generate.js');
      const { applyPlan, planImport, readRecord, unifiedDiff } = await import('../internal/openapi/apply.js');
      const out = resolve(flags.out);
      const options = {
        name: flags.name,
        tags: list(flags.tags),
        excludeTags: list(flags.excludeTags),
        operations: list(flags.operations),
        excludeOperations: list(flags.excludeOperations),
        serverUrl: flags.serverUrl,
        approval: flags.approval,
      };
      let generated: ReturnType<typeof generate>;
      let sha256: string;
      let loadWarnings: string[];
      try {
        const loaded = await loadDocument(source);
        sha256 = loaded.sha256;
        loadWarnings = loaded.warnings;
        generated = generate(loaded.document, options, source, loaded.url);
      } catch (error) {
        const code = reportError(io, error, flags.json);
        const refused = REFUSED.has(String((error as { code?: string }).code));
        throw new CommandExit(refused ? ExitCode.Usage : code);
      }
      const warnings = [...loadWarnings, ...generated.warnings];
      if (!flags.json) for (const w of warnings) io.err(`warning: ${w}`);
      if (generated.operations.length === 0) {
        throw new CommandExit(
          reportError(
            io,
            cliErrors.create('api:import:nothing-to-import', {
              source,
              reason: warnings.length > 0 ? ' (see the warnings)' : '',
            }),
            flags.json,
          ),
        );
      }
      const record = await readRecord(out, generated.name);
      const plan = await planImport(out, generated.files, record, flags.force === true);
      const conflicts = plan.changes.filter((c) => c.action === 'conflict');
      const report = () => {
        if (flags.json) {
          printJson(io, {
            name: generated.name,
            operations: generated.operations,
            changes: plan.changes.map(({ path, action, conflicts }) => ({
              path,
              action,
              ...(conflicts ? { conflicts } : {}),
            })),
            keptDropped: plan.keptDropped,
            warnings,
          });
          return;
        }
        for (const change of plan.changes) {
          io.err(
            `${ACTION_WORDS[change.action]} ${change.path}${change.conflicts ? ` (both changed: ${change.conflicts.join(', ')})` : ''}`,
          );
        }
        for (const path of plan.keptDropped) {
          io.err(`kept ${path}: its operation is gone from the document, but the file was edited by hand`);
        }
        if (plan.changes.length === 0) io.err('no changes');
      };
      if (flags.dryRun || flags.check || conflicts.length > 0) {
        const shown = flags.dryRun ? plan.changes : conflicts;
        if (!flags.json) for (const change of shown) io.out(unifiedDiff(change));
        report();
        if (conflicts.length > 0) {
          if (flags.json) throw new CommandExit(ExitCode.Conflict);
          reportError(
            io,
            cliErrors.create('api:import:conflict', {
              count: conflicts.length,
              files: conflicts.map((c) => c.path).join(', '),
            }),
          );
          throw new CommandExit(ExitCode.Conflict);
        }
        if (flags.check && plan.changes.length > 0) throw new CommandExit(ExitCode.UserError);
        return;
      }
      await applyPlan(
        out,
        plan,
        generated.files,
        { source, sha256, flags: { ...options, name: generated.name } },
        generated.name,
      );
      report();
      if (!flags.json && plan.changes.length > 0) {
        const count = generated.operations.length;
        io.err(
          `${count} operation${count === 1 ? '' : 's'} imported as ${generated.name}-*; run mt check ${flags.out}`,
        );
      }
    });
};
