// The console's one stylesheet (decision 0270): our own, small, no framework. Colours are custom properties set for
// light and dark (prefers-color-scheme); every status colour comes with its word, never alone. The CSP forbids
// inline styles, so a timeline bar's place and length are classes (`o-N` left, `w-N` width, N a whole percent).

const BASE = `
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1b1f24; --muted: #57606a; --surface: #f6f8fa; --line: #6e7781; --soft-line: #d0d7de;
  --link: #0a58ca; --focus: #b3400b; --track: #eaeef2;
  --ok-bg: #dafbe1; --ok-fg: #116329; --warn-bg: #fff8c5; --warn-fg: #6b4300; --bad-bg: #ffebe9; --bad-fg: #a40e26;
  --info-bg: #ddf4ff; --info-fg: #0a4a9e; --idle-bg: #eaeef2; --idle-fg: #424a53;
  --bar-model: #3b6fd4; --bar-tool: #1f883d; --bar-fail: #cf222e; --bar-wait: #bf8700; --bar-input: #8250df; --bar-budget: #bc4c00; --bar-run: #57606a;
  --primary-bg: #1a7f37; --primary-fg: #ffffff; --danger-bg: #b42318; --danger-fg: #ffffff;
  --c-auth: #0e7490; --c-msg: #6639ba;
  --j-key: #0550ae; --j-str: #0a3069; --j-num: #953800; --j-lit: #8250df;
  --step--1: 0.875rem; --step-0: 1rem; --step-1: 1.25rem; --step-2: 1.563rem; --step-3: 1.953rem;
  --space-1: 0.25rem; --space-2: 0.5rem; --space-3: 0.75rem; --space-4: 1rem; --space-5: 1.5rem; --space-6: 2rem;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 100%; line-height: 1.5;
  color: var(--fg); background: var(--bg);
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9da7b3; --surface: #161b22; --line: #7d8590; --soft-line: #30363d;
    --link: #6cb6ff; --focus: #ffa657; --track: #21262d;
    --ok-bg: #12361f; --ok-fg: #7ee2a8; --warn-bg: #3b2e00; --warn-fg: #f2cc60; --bad-bg: #4a1219; --bad-fg: #ffb1ab;
    --info-bg: #0c2d6b; --info-fg: #a5d6ff; --idle-bg: #30363d; --idle-fg: #d0d7de;
    --bar-model: #58a6ff; --bar-tool: #3fb950; --bar-fail: #f85149; --bar-wait: #d29922; --bar-input: #bc8cff; --bar-budget: #f0883e; --bar-run: #8b949e;
    --primary-bg: #238636; --primary-fg: #ffffff; --danger-bg: #da3633; --danger-fg: #ffffff;
    --c-auth: #39c5cf; --c-msg: #d2a8ff;
    --j-key: #79c0ff; --j-str: #a5d6ff; --j-num: #ffa657; --j-lit: #d2a8ff;
  }
}
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; overflow-wrap: anywhere; }
h1 { font-size: var(--step-3); line-height: 1.2; margin: var(--space-4) 0 var(--space-3); }
h2 { font-size: var(--step-2); line-height: 1.25; margin: var(--space-5) 0 var(--space-2); }
h3 { font-size: var(--step-1); line-height: 1.3; margin: var(--space-4) 0 var(--space-2); }
p, ul, ol, dl { margin: 0 0 var(--space-3); }
small, .muted { color: var(--muted); }
a { color: var(--link); }
a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
code, pre, kbd { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: var(--step--1); }
kbd { border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 4px; padding: 0 var(--space-1); background: var(--surface); }
header { display: flex; flex-wrap: wrap; gap: var(--space-2) var(--space-4); align-items: center; padding: var(--space-2) var(--space-4); background: var(--surface); border-bottom: 1px solid var(--line); }
header ul { display: flex; flex-wrap: wrap; gap: var(--space-1) var(--space-4); list-style: none; margin: 0; padding: 0; }
.brand { font-weight: 700; margin: 0; }
.logout, .namespace { display: flex; flex-wrap: wrap; gap: var(--space-2); align-items: center; margin: 0; }
.logout { margin-left: auto; }
.namespace { margin-left: auto; }
.namespace + .logout { margin-left: 0; }
.namespace label, .namespace select { display: inline; margin: 0; width: auto; }
main { padding: var(--space-4); max-width: 80rem; margin: 0 auto; }
.skip { position: absolute; left: -10000px; top: 0; background: var(--bg); padding: var(--space-2); z-index: 10; }
.skip:focus { left: var(--space-2); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
table { border-collapse: collapse; margin: var(--space-2) 0 var(--space-4); width: 100%; }
caption { text-align: left; font-weight: 700; padding: var(--space-1) 0; }
th, td { border-bottom: 1px solid var(--soft-line); padding: var(--space-2); text-align: left; vertical-align: top; }
thead th { border-bottom: 2px solid var(--line); }
pre, blockquote { background: var(--surface); border: 1px solid var(--soft-line); border-radius: 6px; padding: var(--space-2) var(--space-3); margin: 0 0 var(--space-3); white-space: pre-wrap; overflow-wrap: anywhere; }
blockquote { border-left: 4px solid var(--line); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: var(--space-1) var(--space-3); }
dt { font-weight: 700; }
dd { margin: 0; }
.error { color: var(--bad-fg); font-weight: 700; }
button, a.button { font: inherit; display: inline-block; padding: var(--space-2) var(--space-3); margin: var(--space-1) 0; border: 1px solid var(--line); border-radius: 6px; background: var(--surface); color: var(--fg); cursor: pointer; text-decoration: none; line-height: 1.25; }
button.primary { background: var(--primary-bg); color: var(--primary-fg); border-color: var(--primary-bg); }
button.danger { background: var(--danger-bg); color: var(--danger-fg); border-color: var(--danger-bg); }
label { display: block; margin-top: var(--space-2); font-weight: 600; }
textarea, input:not([type=hidden]):not([type=checkbox]):not([type=radio]), select { font: inherit; display: block; margin: var(--space-1) 0 var(--space-2); max-width: 40rem; width: 100%; padding: var(--space-1) var(--space-2); border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.filters { display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: 0 var(--space-4); align-items: end; }
#steps li { margin-bottom: var(--space-2); }
.badge { display: inline-block; padding: 0 var(--space-2); border-radius: 999px; font-size: var(--step--1); font-weight: 700; border: 1px solid currentColor; white-space: nowrap; }
.s-ok { background: var(--ok-bg); color: var(--ok-fg); }
.s-warn { background: var(--warn-bg); color: var(--warn-fg); }
.s-bad { background: var(--bad-bg); color: var(--bad-fg); }
.s-info { background: var(--info-bg); color: var(--info-fg); }
.s-idle { background: var(--idle-bg); color: var(--idle-fg); }
.shortcuts { font-size: var(--step--1); color: var(--muted); }
.shortcuts label { display: inline; font-weight: 400; margin: 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: var(--space-3) var(--space-4); margin: 0 0 var(--space-4); background: var(--bg); }
.card:focus, .card:focus-within { border-color: var(--focus); }
.card > h2 { margin-top: 0; font-size: var(--step-1); }
.card-meta { display: flex; flex-wrap: wrap; gap: var(--space-1) var(--space-3); color: var(--muted); font-size: var(--step--1); }
.card-meta strong { color: var(--fg); }
.side-by-side { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 22rem), 1fr)); gap: var(--space-4); }
.side-by-side h3 { font-size: var(--step-0); margin-top: var(--space-2); }
.decide { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: var(--space-2) var(--space-4); align-items: end; border-top: 1px solid var(--soft-line); padding-top: var(--space-2); }
.decide form { margin: 0; }
.decide details { grid-column: 1 / -1; }
.request-line { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: var(--step--1); font-weight: 700; }
details > summary { cursor: pointer; }
.j-key { color: var(--j-key); } .j-str { color: var(--j-str); } .j-num { color: var(--j-num); } .j-lit { color: var(--j-lit); }
.timeline, .timeline ol { list-style: none; margin: 0; padding: 0; }
/* A child run's steps are indented by their label only: every track spans the same columns, so bars line up. */
.timeline ol .tl-label { padding-left: var(--space-4); border-left: 2px solid var(--soft-line); }
.timeline ol ol .tl-label { padding-left: var(--space-6); }
.tl-step > details > summary { display: grid; grid-template-columns: minmax(0, 1fr); gap: var(--space-1) var(--space-3); align-items: center; padding: var(--space-1) 0; border-bottom: 1px solid var(--soft-line); }
@media (min-width: 40rem) { .tl-step > details > summary { grid-template-columns: 12rem minmax(0, 1fr) 14rem; } }
@media (min-width: 64rem) { .tl-step > details > summary { grid-template-columns: 16rem minmax(0, 1fr) 22rem; } }
.tl-step > details > summary::-webkit-details-marker { display: none; }
.tl-step > details > summary { list-style: none; }
.tl-label::before { content: "\\25B8\\00a0"; }
.tl-step > details[open] > summary .tl-label::before { content: "\\25BE\\00a0"; }
.tl-track { position: relative; height: 0.875rem; background: var(--track); border-radius: 3px; }
.tl-bar { position: absolute; top: 0; bottom: 0; min-width: 3px; border-radius: 3px; background: var(--bar-run); }
.k-model .tl-bar { background: var(--bar-model); }
.k-tool .tl-bar { background: var(--bar-tool); }
.k-fail .tl-bar { background: var(--bar-fail); }
.k-approval .tl-bar { background: var(--bar-wait); }
.k-input .tl-bar { background: var(--bar-input); }
.k-budget .tl-bar { background: var(--bar-budget); }
.tl-meta { font-size: var(--step--1); color: var(--muted); }
.tl-step > details > summary > * { min-width: 0; }
.tl-detail { padding: var(--space-2) 0 var(--space-3) var(--space-4); }
.tl-legend { display: flex; flex-wrap: wrap; gap: var(--space-1) var(--space-4); font-size: var(--step--1); padding: 0; list-style: none; }
.tl-swatch { display: inline-block; width: 0.75rem; height: 0.75rem; border-radius: 2px; margin-right: var(--space-1); vertical-align: middle; }
.tl-swatch.k-model { background: var(--bar-model); } .tl-swatch.k-tool { background: var(--bar-tool); } .tl-swatch.k-fail { background: var(--bar-fail); }
.tl-swatch.k-approval { background: var(--bar-wait); } .tl-swatch.k-input { background: var(--bar-input); }
/* Forms generated from a JSON Schema (decision 0360), a folder's breadcrumbs, a search's passages. */
fieldset { border: 1px solid var(--soft-line); border-radius: 6px; margin: var(--space-2) 0 var(--space-3); padding: var(--space-1) var(--space-3) var(--space-2); min-width: 0; }
legend { font-weight: 700; padding: 0 var(--space-1); }
.field .hint, .field .error { display: block; margin: calc(-1 * var(--space-1)) 0 var(--space-2); }
.type { font-weight: 400; color: var(--muted); }
.required { color: var(--bad-fg); font-weight: 700; }
.compare label, .compare select { display: inline-block; width: auto; margin-right: var(--space-2); }
.crumbs { display: flex; flex-wrap: wrap; list-style: none; padding: 0; gap: var(--space-1); }
.crumbs li + li::before { content: "/\\00a0"; color: var(--muted); }
.passages > li { margin-bottom: var(--space-3); }
.tl-swatch.k-budget { background: var(--bar-budget); }
/* The overview's charts (decision 0356): SVG shapes filled by class, so light and dark follow the variables. */
.chart { margin: 0 0 var(--space-4); }
.chart figcaption { font-weight: 700; margin-bottom: var(--space-1); }
.chart-svg { display: block; width: 100%; height: 7rem; background: var(--track); border-radius: 4px; }
.chart-axis { display: flex; justify-content: space-between; font-size: var(--step--1); color: var(--muted); margin: 0; }
.chart-legend { display: flex; flex-wrap: wrap; gap: var(--space-1) var(--space-4); font-size: var(--step--1); padding: 0; list-style: none; margin: var(--space-1) 0; }
.chart-swatch { display: inline-block; width: 0.75rem; height: 0.75rem; border-radius: 2px; margin-right: var(--space-1); vertical-align: middle; }
.c-Completed { fill: var(--bar-tool); background: var(--bar-tool); } .c-Failed { fill: var(--bar-fail); background: var(--bar-fail); }
.c-Cancelled { fill: var(--bar-run); background: var(--bar-run); } .c-Running { fill: var(--bar-model); background: var(--bar-model); }
.c-PendingApproval { fill: var(--bar-wait); background: var(--bar-wait); } .c-PendingBudget { fill: var(--bar-budget); background: var(--bar-budget); }
.c-PendingAuthorization { fill: var(--c-auth); background: var(--c-auth); } .c-WaitingForInput { fill: var(--c-msg); background: var(--c-msg); }
.c-value { fill: var(--bar-model); }
.bar-track { fill: var(--track); }
.bar-list { list-style: none; padding: 0; margin: 0; }
.bar-list li { display: grid; grid-template-columns: minmax(6rem, 10rem) minmax(4rem, 1fr); gap: 0 var(--space-3); align-items: center; padding: var(--space-1) 0; border-bottom: 1px solid var(--soft-line); }
.bar-svg { display: block; width: 100%; height: 0.875rem; }
.bar-text { grid-column: 1 / -1; font-size: var(--step--1); color: var(--muted); }
.c-PendingLimit { fill: var(--bar-wait); background: var(--bar-wait); }
/* The usage page (decision 0395): the period's choices on a line, each a radio button and its word. */
label.choice { display: inline-flex; gap: var(--space-1); align-items: center; margin: var(--space-1) var(--space-4) var(--space-1) 0; font-weight: 400; }
@media (max-width: 40rem) {
  main { padding: var(--space-3); }
  .tl-detail { padding-left: var(--space-2); }
  .decide { grid-template-columns: minmax(0, 1fr); }
  dl { grid-template-columns: 1fr; }
  th, td { padding: var(--space-1); }
  .logout { margin-left: 0; }
}
`;

/** The console's stylesheet: the base rules and a bar's place and length classes (0 to 100 %). */
export function consoleCss(): string {
  const places: string[] = [];
  for (let n = 0; n <= 100; n++) places.push(`.o-${n}{left:${n}%}.w-${n}{width:${n}%}`);
  return `${BASE}${places.join('')}\n`;
}
