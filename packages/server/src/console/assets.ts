import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { serverRequire } from '../server/package-require.js';

/** The files under /console/assets/: htmx 4 and its SSE extension from node_modules (no CDN, no build), and the CSS. */
export interface Asset {
  type: string;
  body: string;
}

const htmxDir = join(dirname(serverRequire.resolve('htmx.org/package.json')), 'dist');

const CSS = `
:root { color-scheme: light; font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a; background: #fff; }
body { margin: 0; }
header { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; padding: 0.5rem 1rem; background: #f2f2f2; border-bottom: 1px solid #767676; }
header ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
.brand { font-weight: bold; margin: 0; }
.logout { margin-left: auto; }
main { padding: 1rem; max-width: 72rem; }
a { color: #0b4fa8; }
a[aria-current="page"] { font-weight: bold; }
.skip { position: absolute; left: -10000px; top: 0; background: #fff; padding: 0.5rem; z-index: 10; }
.skip:focus { left: 0.5rem; }
:focus-visible { outline: 3px solid #b3400b; outline-offset: 2px; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
caption { text-align: left; font-weight: bold; padding: 0.25rem 0; }
th, td { border: 1px solid #767676; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
pre, blockquote { background: #f6f6f6; border: 1px solid #767676; padding: 0.5rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.error { color: #a30000; font-weight: bold; }
button { font: inherit; padding: 0.35rem 0.8rem; margin: 0.25rem 0; }
label { display: block; margin-top: 0.5rem; }
textarea, input:not([type=hidden]), select { font: inherit; display: block; margin-bottom: 0.5rem; max-width: 40rem; width: 100%; }
.filters { display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: 0 1rem; align-items: end; }
#steps li { margin-bottom: 0.5rem; }
`;

/** The assets by file name, read once at start. */
export function loadAssets(): Map<string, Asset> {
  const js = (file: string): Asset => ({
    type: 'text/javascript; charset=utf-8',
    body: readFileSync(join(htmxDir, file), 'utf8'),
  });
  return new Map([
    ['htmx.min.js', js('htmx.min.js')],
    ['hx-sse.min.js', js('ext/hx-sse.min.js')],
    ['console.css', { type: 'text/css; charset=utf-8', body: CSS }],
  ]);
}
