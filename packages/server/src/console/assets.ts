import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { serverRequire } from '../server/package-require.js';
import { CONSOLE_JS } from './script.js';
import { consoleCss } from './styles.js';

/**
 * The files under /console/assets/: htmx 4 and its SSE extension from node_modules (no CDN, no build), the console's
 * stylesheet and its small script (keyboard shortcuts).
 */
export interface Asset {
  type: string;
  body: string;
}

const htmxDir = join(dirname(serverRequire.resolve('htmx.org/package.json')), 'dist');

/** The assets by file name, read once at start. */
export function loadAssets(): Map<string, Asset> {
  const js = (file: string): Asset => ({
    type: 'text/javascript; charset=utf-8',
    body: readFileSync(join(htmxDir, file), 'utf8'),
  });
  return new Map([
    ['htmx.min.js', js('htmx.min.js')],
    ['hx-sse.min.js', js('ext/hx-sse.min.js')],
    ['console.css', { type: 'text/css; charset=utf-8', body: consoleCss() }],
    ['console.js', { type: 'text/javascript; charset=utf-8', body: CONSOLE_JS }],
  ]);
}
