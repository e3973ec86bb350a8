import { readFileSync } from 'node:fs';
import {
  blockedIpv4Ranges,
  blockedIpv6Ranges,
  blockedMetadataRanges,
  blockedNameSuffixes,
  blockedNames,
  metadataAddresses,
} from '@maitento/egress';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(new URL('../../../docs/security.md', import.meta.url), 'utf8');
const start = doc.indexOf('## Egress: public addresses only');
const next = doc.indexOf('\n## ', start + 1);
const section = doc.slice(start, next === -1 ? undefined : next);
// Table rows as trimmed cells, so the table may be padded by a formatter.
const rows = section
  .split('\n')
  .filter((line) => line.startsWith('|'))
  .map((line) =>
    line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim()),
  );

describe('docs/security.md', () => {
  it('lists every refused range, each with its name, in a table row', () => {
    for (const range of [...blockedIpv4Ranges, ...blockedIpv6Ranges, ...blockedMetadataRanges]) {
      expect(rows, range.cidr).toContainEqual([`\`${range.cidr}\``, range.name, range.source]);
    }
  });

  it('lists every refused name suffix and metadata name', () => {
    for (const name of [...blockedNameSuffixes, ...blockedNames]) {
      expect(section, name).toContain(`\`${name}\``);
    }
  });

  it('names every cloud metadata address, and says only an entry naming it exactly opens one', () => {
    for (const { address } of metadataAddresses) expect(section, address).toContain(`\`${address}\``);
    expect(section).toContain(
      "Only the operator's allow-list, naming the exact address, lets a metadata address through.",
    );
  });

  it('lists no range in a table that the code does not refuse', () => {
    const cidrs = rows.map((cells) => cells[0]).filter((cell) => /^`[^`]+\/\d+`$/.test(cell));
    const known = new Set(
      [...blockedIpv4Ranges, ...blockedIpv6Ranges, ...blockedMetadataRanges].map((r) => `\`${r.cidr}\``),
    );
    expect(cidrs.filter((cidr) => !known.has(cidr))).toEqual([]);
    expect(cidrs.length).toBe(known.size);
  });
});
