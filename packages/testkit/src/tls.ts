import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Makes a self-signed certificate (also its own CA) for the given DNS names with openssl, at test time. */
export function selfSignedCertificate(names: string[]): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'mt-test-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        `/CN=${names[0]}`,
        '-addext',
        `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`,
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A certificate authority made by the test, and a server certificate it signed. */
export interface CertificateChain {
  /** The CA's certificate (PEM): what a client trusts. */
  ca: string;
  /** The server's certificate (PEM), signed by the CA, naming `names`. */
  cert: string;
  /** The server's private key (PEM). */
  key: string;
}

/**
 * Makes a CA (its own self-signed root) and a server certificate it signed for the given DNS names, with openssl,
 * at test time: the chain a managed database presents.
 */
export function certificateChain(names: string[]): CertificateChain {
  const dir = mkdtempSync(join(tmpdir(), 'mt-test-ca-'));
  const file = (name: string) => join(dir, name);
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  try {
    openssl([
      'req',
      '-x509',
      ...ec,
      '-keyout',
      file('ca.key'),
      '-out',
      file('ca.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=mt test CA',
    ]);
    openssl(['req', '-new', ...ec, '-keyout', file('key.pem'), '-out', file('server.csr'), '-subj', `/CN=${names[0]}`]);
    writeFileSync(file('ext.cnf'), `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\n`);
    openssl([
      'x509',
      '-req',
      '-in',
      file('server.csr'),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file('cert.pem'),
      '-days',
      '1',
      '-extfile',
      file('ext.cnf'),
    ]);
    const read = (name: string) => readFileSync(file(name), 'utf8');
    return { ca: read('ca.pem'), cert: read('cert.pem'), key: read('key.pem') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
