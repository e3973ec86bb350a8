import { readFile, stat, writeFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import type { Diagnostic } from '@maitento/lang';
import { ExitCode } from '../internal/exit-codes.js';
import { CommandExit, printJson, reportError } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

interface FmtFlags {
  check?: boolean;
  json?: boolean;
}

/**
 * The `.mtr` files `mt fmt DIR` formats: in a config repo (a folder holding a resource folder) those `mt check`
 * reads (lang's `configRepoFiles`: under the resource folders, in no node_modules or .git), so test fixtures and
 * examples elsewhere (`packages/`, `docs/`) are left alone; in any other folder every `.mtr` file under it, with
 * the same folders skipped.
 */
async function filesToFormat(dir: string): Promise<string[]> {
  const { configRepoFiles, filesUnder, isConfigRepo } = await import('@maitento/lang');
  const paths = (await isConfigRepo(dir)) ? await configRepoFiles(dir, ['.mtr']) : await filesUnder(dir, ['.mtr']);
  return paths.map((path) => join(dir, ...path.split('/')));
}

function displayPath(root: string, path: string): string {
  const rel = relative(root, path) || path;
  return rel.split(sep).join('/');
}

/** `mt fmt [DIR] [--check]`: rewrites every `.mtr` file under DIR in the canonical layout. */
export const register: RegisterCommand = (program, io) => {
  program
    .command('fmt')
    .description('Format the .mtr files of a config repo (or of any directory) in the canonical layout')
    .argument('[dir]', 'the directory (or one .mtr file) to format', '.')
    .option('--check', 'change nothing; list the files that would change on stdout and exit 1 if any')
    .option('--json', 'print { "files": [{ "file", "changed" }] } on stdout')
    .addHelpText(
      'after',
      `
In a config repo (a directory holding connectors/, external-operations/, agents/ or interactions/) only
the files under those folders are formatted, as mt check reads them; in any other directory every .mtr
file under it. Skips node_modules and .git at any depth. A file with syntax errors is left as it is and its
errors are printed on stderr.

Exit codes: 0 done (or, with --check, nothing to change), 1 a syntax error or, with --check, a file
that is not formatted.`,
    )
    .action(async (dir: string, flags: FmtFlags) => {
      const target = resolve(dir);
      let root = target;
      let paths: string[];
      try {
        const info = await stat(target);
        if (info.isDirectory()) {
          paths = await filesToFormat(target);
        } else {
          root = resolve(target, '..');
          paths = [target];
        }
      } catch (error) {
        throw new CommandExit(
          reportError(io, new Error(`cannot read ${dir}: ${(error as Error).message}`), flags.json),
        );
      }

      const { formatDiagnostic, formatMtr } = await import('@maitento/lang');
      const results: { file: string; changed: boolean }[] = [];
      const diagnostics: Diagnostic[] = [];
      for (const path of paths) {
        const file = displayPath(root, path);
        const text = await readFile(path, 'utf8');
        const formatted = formatMtr(text, file);
        const errors = formatted.diagnostics.filter((d) => d.severity === 'error');
        if (errors.length > 0) {
          diagnostics.push(...errors);
          if (!flags.json) for (const d of errors) io.err(formatDiagnostic(d, text));
          results.push({ file, changed: false });
          continue;
        }
        const changed = formatted.text !== text;
        results.push({ file, changed });
        if (!changed) continue;
        if (flags.check) {
          if (!flags.json) io.out(file);
        } else {
          await writeFile(path, formatted.text, 'utf8');
          if (!flags.json) io.err(`formatted ${file}`);
        }
      }

      const changedCount = results.filter((r) => r.changed).length;
      if (flags.json) {
        const out: Record<string, unknown> = { files: results };
        if (diagnostics.length > 0) {
          out.diagnostics = diagnostics.map(({ code, severity, message, file, line, column }) => ({
            code,
            severity,
            message,
            file,
            line,
            column,
          }));
        }
        printJson(io, out);
      } else {
        const verb = flags.check ? 'would change' : 'formatted';
        const broken = new Set(diagnostics.map((d) => d.file)).size;
        io.err(
          `${results.length} file${results.length === 1 ? '' : 's'} checked, ${changedCount} ${verb}` +
            (broken > 0 ? `, ${broken} with syntax errors` : ''),
        );
      }
      if (diagnostics.length > 0 || (flags.check && changedCount > 0)) throw new CommandExit(ExitCode.UserError);
    });
};
