import { createEgressPolicy } from '@maitento/egress';
import { describe, expect, it } from 'vitest';
import { compile } from './helpers.js';

// A platform tool names a path on the platform (`url = "/v1/..."`), resolved against the server's own URL when it
// is called: the same config repo deploys to every server, and `mt check` needs no server address for it.
const connector = (url: string, auth = 'Maitento', extra = '') => ({
  'connectors/open-api/c.mtr': `method = "GET"\nurl = "${url}"\nauth = "${auth}"\ndescription = "d"\n${extra}`,
});
const codes = (files: Record<string, string>, options = {}) => compile(files, options).diagnostics.map((d) => d.code);

describe('a path on the platform as a connector url', () => {
  const path = '/v1/file-systems/{fileSystemId}/files';
  const withParam = 'parameters.path = [ { name = "fileSystemId" } ]\n';

  it('is accepted for auth = "Maitento" with no platform URL configured', () => {
    const compiled = compile(connector(path, 'Maitento', withParam));
    expect(compiled.diagnostics).toEqual([]);
    expect(compiled.ok && compiled.connectors[0].url).toBe(path);
  });

  it('is accepted whatever the platform URL is, and under the default address rules', () => {
    for (const platformOrigin of ['http://127.0.0.1:8080', 'https://maitento.example.com', 'http://10.0.0.7:9999']) {
      expect(codes(connector(path, 'Maitento', withParam), { platformOrigin, egress: createEgressPolicy() })).toEqual(
        [],
      );
    }
  });

  it('keeps the path checks: placeholders declared, none in the query', () => {
    expect(codes(connector(path))).toEqual(['mtr:path:undeclared']);
    expect(codes(connector('/v1/search?q={q}', 'Maitento', 'parameters.path = [ { name = "q" } ]\n'))).toContain(
      'mtr:url:invalid',
    );
  });

  it('is refused with its own code for any other auth, and for a host-relative //host URL', () => {
    for (const auth of ['None', 'Header']) {
      const diagnostics = compile(connector('/v1/orders', auth)).diagnostics;
      expect(diagnostics.map((d) => d.code)).toContain('mtr:url:path-only');
      const d = diagnostics.find((x) => x.code === 'mtr:url:path-only');
      expect(d?.message).toContain('/v1/orders');
      expect(d?.hint).toContain('auth = "Maitento"');
    }
    expect(codes(connector('//evil.example.com/v1/orders'))).toEqual(['mtr:url:invalid']);
  });
});
