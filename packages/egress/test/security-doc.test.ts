import { readFileSync } from 'node:fs';
import { blockedIpv4Ranges, blockedIpv6Ranges, blockedNameSuffixes, blockedNames } from '@maitento/egress';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(new URL('../../../docs/security.md', import.meta.url), 'utf8');
const section = doc.slice(doc.indexOf('## Egress: public addresses only'));

describe('docs/security.md', () => {
  it('lists every refused range, each with its name, in a table row', () => {
    for (const range of [...blockedIpv4Ranges, ...blockedIpv6Ranges]) {
      expect(section, range.cidr).toContain(`| \`${range.cidr}\` | ${range.name} | ${range.source} |`);
    }
  });

  it('lists every refused name suffix and metadata name', () => {
    for (const name of [...blockedNameSuffixes, ...blockedNames]) {
      expect(section, name).toContain(`\`${name}\``);
    }
  });

  it('lists no range in a table that the code does not refuse', () => {
    const rows = [...section.matchAll(/^\| `([^`]+\/\d+)` \|/gm)].map((m) => m[1]);
    const known = new Set([...blockedIpv4Ranges, ...blockedIpv6Ranges].map((r) => r.cidr));
    expect(rows.filter((cidr) => !known.has(cidr))).toEqual([]);
    expect(rows.length).toBe(known.size);
  });
});
