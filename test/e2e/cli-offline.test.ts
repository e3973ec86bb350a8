import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, copyExampleRepo, ROOT, requireBuiltCli, runMt, tempHome } from './support/harness.js';

// These tests need no Maitento server: they check what `mt` does before or instead of talking to one.
let home: string;
let repo: string;
let requests = 0;
let counter: Server;
let counterUrl: string;

beforeAll(async () => {
  requireBuiltCli();
  home = await tempHome();
  repo = await copyExampleRepo();
  // Counts every request; answers like a server accepting a deploy, so a request that is sent succeeds.
  counter = createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ applied: true, changes: [] }));
    });
  });
  await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
  counterUrl = `http://127.0.0.1:${(counter.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => counter.close(resolve));
  await rm(home, { recursive: true, force: true });
  await rm(repo, { recursive: true, force: true });
});

describe('mt usage errors', { timeout: 120_000 }, () => {
  it('exits 2 on an unknown command, a missing argument or a version that is not a number', async () => {
    for (const args of [
      ['no-such-command'],
      ['connector-versions'],
      ['extop-version-disable', 'get-order', 'two'],
      // The CLI's own --version comes before a command; after one it is an unknown option of that command.
      ['connector-versions', 'get-order', '--version'],
    ]) {
      const result = await runMt(args, { home });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/error/);
    }
    const role = await runMt(['key-create', '--role', 'root'], { home });
    expect(role.code).toBe(2);
  });
});

describe('mt output to a closed pipe', { timeout: 120_000 }, () => {
  it('stops quietly with exit 0 when the reader has gone (`mt ... | head -1`), without an EPIPE crash', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'packages/cli/bin/mt.js'), 'check', repo, '--tools'], {
      cwd: home,
      env: cleanEnv(home),
    });
    // Close our end of its stdout before it writes anything: every write it makes then fails with EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(code).toBe(0);
  });
});

describe('mt connection settings', { timeout: 120_000 }, () => {
  it('says which URL it tried and how to set it when nothing listens there', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const result = await runMt(['connector-list'], { home, env: { MT_API_URL: url, MT_API_KEY: 'mt_x' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error [api:sdk:connection-failed]: could not connect to ${url}/v1/connectors`);
    expect(result.stderr).toContain('came from MT_API_URL');
    expect(result.stderr).toContain('--api URL');
  });

  it('refuses to call a server without a key and says how to give one', async () => {
    const before = requests;
    const result = await runMt(['secret-list', '--api', counterUrl], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error [api:cli:key-missing]: no API key to send to ${counterUrl}`);
    expect(result.stderr).toContain('MT_API_KEY');
    expect(requests).toBe(before);
  });
});

describe('mt deploy of a repo with errors', { timeout: 120_000 }, () => {
  it('prints the diagnostics, exits 1 and sends no request at all', async () => {
    const broken = await mkdtemp(join(tmpdir(), 'mt-e2e-broken-'));
    await mkdir(join(broken, 'agents'), { recursive: true });
    await writeFile(
      join(broken, 'agents', 'helper.mtr'),
      'model = "openai:gpt-4o-mini"\ninstructions = "Help."\nfunctions = [ { ref = @ref("no-such-tool") } ]\n',
    );
    const before = requests;
    const result = await runMt(['deploy', broken, '--api', counterUrl, '--key', 'mt_x'], { home });
    await rm(broken, { recursive: true, force: true });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/agents\/helper\.mtr:3:\d+ error mtr:ref:/);
    expect(result.stderr).toContain('error [api:cli:config-invalid]');
    expect(result.stdout).toBe('');
    expect(requests).toBe(before);
  });

  it('does send the request for the same setup when the repo is valid (the counter counts)', async () => {
    const before = requests;
    const result = await runMt(['deploy', repo, '--api', counterUrl, '--key', 'mt_x', '--json'], { home });
    expect(result.stderr).not.toContain('error');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ applied: true, changes: [] });
    expect(requests).toBe(before + 1);
  });

  it('reports a folder that does not exist, as mt check does', async () => {
    const result = await runMt(['deploy', join(home, 'nowhere'), '--key', 'mt_x'], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error [api:cli:not-a-config-repo]: ${join(home, 'nowhere')} is not a config repo`);
  });
});
