import { sharedErrors } from '@maitento/errors';
import { didYouMean } from '../diagnostics/did-you-mean.js';
import type { ResourceKind } from './resources.js';
import { didYouMeanText, type Reporter } from './report.js';
import type { FoundRef } from './shape.js';
import { displayPath } from './value-tree.js';

/** Every resource name of a repo, by kind (also of files with errors, so a reference to them is not "unknown"). */
export type NameIndex = Readonly<Record<ResourceKind, ReadonlySet<string>>>;

const ARTICLE: Record<string, string> = {
  'auth-provider': 'auth provider',
  schedule: 'schedule',
  trigger: 'trigger',
  connector: 'connector',
  tool: 'tool',
  agent: 'agent',
  interaction: 'interaction',
  secret: 'secret',
};

/**
 * Resolves the references of one file: each must name a resource of the kind its property expects.
 * Secrets are any name unless `knownSecrets` is given (at deploy, the namespace's secrets).
 */
export function resolveReferences(
  file: string,
  refs: readonly FoundRef[],
  names: NameIndex,
  knownSecrets: readonly string[] | undefined,
  reporter: Reporter,
): boolean {
  let ok = true;
  for (const { ref, kind, path } of refs) {
    if (kind === 'secret') {
      if (knownSecrets === undefined || knownSecrets.includes(ref.name)) continue;
      ok = false;
      const guess = didYouMean(ref.name, [...knownSecrets]);
      const { message } = sharedErrors.create('api:secrets:not-found', { ref: ref.name });
      const hint = guess ? didYouMeanText(guess) : 'create it with mt secret-create, then deploy again';
      reporter.reportRaw('api:secrets:not-found', message, file, ref.span, hint);
      continue;
    }
    if (names[kind].has(ref.name)) continue;
    ok = false;
    const other = (Object.keys(names) as ResourceKind[]).find((k) => names[k].has(ref.name));
    if (other) {
      reporter.report(
        'mtr:ref:wrong-kind',
        { name: ref.name, actual: ARTICLE[other], expected: ARTICLE[kind], key: displayPath(path) },
        file,
        ref.span,
      );
      continue;
    }
    const guess = didYouMean(ref.name, [...names[kind]]);
    reporter.report(
      'mtr:ref:unknown',
      {
        name: ref.name,
        kind: ARTICLE[kind],
        suggestion: guess
          ? didYouMeanText(guess)
          : `${ARTICLE[kind] === 'auth provider' ? 'an' : 'a'} ${ARTICLE[kind]} is named by its file: ${kind === 'tool' ? 'external-operations/open-api' : kind === 'connector' ? `connectors/open-api/${ref.name}.mtr or connectors/mcp` : kind === 'agent' ? 'agents' : kind === 'auth-provider' ? 'auth-providers' : kind === 'schedule' ? 'schedules' : kind === 'trigger' ? 'triggers' : 'interactions/one-shot'}/${ref.name}.mtr`,
      },
      file,
      ref.span,
    );
  }
  return ok;
}
