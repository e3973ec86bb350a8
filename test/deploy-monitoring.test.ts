import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// The example alert rules and Grafana dashboard of deploy/ (docs/operations.md, "Metrics"): promtool checks the rules
// where it is installed; everywhere, their shape is checked here. metrics.test.ts (e2e) checks that every series they
// name is served.
const root = fileURLToPath(new URL('..', import.meta.url));
const ALERTS_FILE = `${root}deploy/prometheus/maitento-alerts.yaml`;
const DASHBOARD_FILE = `${root}deploy/grafana/maitento-dashboard.json`;

interface Rule {
  alert?: unknown;
  record?: unknown;
  expr?: unknown;
  for?: unknown;
  labels?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

function promtool(): string | undefined {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return 'promtool';
  } catch {
    return undefined;
  }
}

/** Parentheses, brackets and braces of a PromQL expression close in order (outside quoted strings). */
function balanced(expr: string): boolean {
  const stack: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  let quote: string | undefined;
  for (const c of expr) {
    if (quote) {
      if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if ('([{'.includes(c)) stack.push(c);
    else if (c in pairs && stack.pop() !== pairs[c]) return false;
  }
  return stack.length === 0 && quote === undefined;
}

describe('deploy/ monitoring files', () => {
  it('the alert rules are Prometheus rule groups: every rule an alert with expr, for, severity and summary', () => {
    const tool = promtool();
    if (tool) execFileSync(tool, ['check', 'rules', ALERTS_FILE], { stdio: 'pipe' });
    const doc = parse(readFileSync(ALERTS_FILE, 'utf8')) as { groups?: { name?: unknown; rules?: Rule[] }[] };
    expect(Object.keys(doc)).toEqual(['groups']);
    expect(doc.groups?.length).toBeGreaterThan(0);
    const names = new Set<string>();
    for (const group of doc.groups ?? []) {
      expect(typeof group.name).toBe('string');
      expect(group.rules?.length).toBeGreaterThan(0);
      for (const rule of group.rules ?? []) {
        expect(Object.keys(rule).sort()).toEqual(['alert', 'annotations', 'expr', 'for', 'labels']);
        expect(rule.alert).toMatch(/^[A-Z][A-Za-z0-9]+$/);
        expect(names.has(String(rule.alert)), `${rule.alert} twice`).toBe(false);
        names.add(String(rule.alert));
        expect(typeof rule.expr).toBe('string');
        expect(balanced(String(rule.expr)), `${rule.alert}: ${rule.expr}`).toBe(true);
        expect(rule.for).toMatch(/^[0-9]+[smhdwy]$/);
        expect(['critical', 'warning', 'info']).toContain(rule.labels?.severity);
        expect(typeof rule.annotations?.summary).toBe('string');
      }
    }
  });

  it('the Grafana dashboard is JSON whose panels query Prometheus through the datasource variable', () => {
    const dash = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as {
      uid: string;
      schemaVersion: number;
      templating: { list: { name: string }[] };
      panels: { id: number; title: string; targets: { expr: string; refId: string }[]; datasource: { uid: string } }[];
    };
    expect(dash.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(dash.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dash.templating.list.map((v) => v.name)).toEqual(['datasource', 'job']);
    expect(new Set(dash.panels.map((p) => p.id)).size).toBe(dash.panels.length);
    for (const panel of dash.panels) {
      // Grafana's variable syntax, not a template string.
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text Grafana substitutes
      expect(panel.datasource.uid).toBe('${datasource}');
      expect(panel.targets.length).toBeGreaterThan(0);
      for (const target of panel.targets) {
        expect(balanced(target.expr), `${panel.title}: ${target.expr}`).toBe(true);
        expect(target.expr).toMatch(/\bmt_[a-z_]+/);
      }
    }
  });
});
