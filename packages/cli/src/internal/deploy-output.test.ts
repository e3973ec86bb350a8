import type { DeployPlan } from '@maitento/sdk';
import { describe, expect, it } from 'vitest';
import { formatPlan, planSummary } from './deploy-output.js';
import { formatTable } from './table.js';

describe('formatTable', () => {
  it('aligns columns with two spaces and prints booleans and missing cells readably', () => {
    expect(
      formatTable(
        ['NAME', 'ENABLED', 'NOTE'],
        [
          ['a', true, null],
          ['longer-name', false, 'x'],
        ],
      ),
    ).toBe(['NAME         ENABLED  NOTE', 'a            yes      -', 'longer-name  no       x'].join('\n'));
  });
});

describe('formatPlan', () => {
  const plan: DeployPlan = {
    applied: false,
    changes: [
      {
        kind: 'connector',
        name: 'orders-get-order',
        action: 'update',
        version: 2,
        previousVersion: 1,
        changed: ['url'],
        breaking: [],
      },
      {
        kind: 'tool',
        name: 'get-order',
        action: 'update',
        version: 3,
        previousVersion: 2,
        changed: ['parameter removed: path.orderId', 'guidance changed'],
        breaking: ['parameter removed: path.orderId'],
      },
      { kind: 'agent', name: 'support-agent', action: 'unchanged', version: 1, breaking: [] },
      { kind: 'interaction', name: 'support', action: 'create', version: 1, breaking: [] },
    ],
  };

  it('shows each resource with its versions and marks breaking changes', () => {
    expect(formatPlan(plan).split('\n')).toEqual([
      'KIND         NAME              ACTION     VERSION',
      'connector    orders-get-order  update     1 → 2',
      '    ~ url',
      'tool         get-order         update     2 → 3',
      '    ! parameter removed: path.orderId (breaking)',
      '    ~ guidance changed',
      'agent        support-agent     unchanged  1',
      'interaction  support           create     1',
    ]);
  });

  it('summarises a dry run as storing nothing and counts breaking changes', () => {
    expect(planSummary(plan)).toBe(
      'dry run: 1 to create, 2 to update, 1 unchanged; nothing was stored; 1 breaking change(s) marked with !',
    );
    expect(planSummary({ applied: true, changes: [plan.changes[2]] })).toBe(
      'deployed: 0 created, 0 updated, 1 unchanged',
    );
  });

  it('shows what --prune deletes, with the runs that pin it, and what a deploy without it keeps', () => {
    const pruned: DeployPlan = {
      applied: true,
      changes: [
        { kind: 'agent', name: 'support-agent', action: 'unchanged', version: 1, breaking: [] },
        { kind: 'tool', name: 'spare-order', action: 'delete', version: 2, breaking: [], pinnedBy: ['run-1'] },
      ],
    };
    expect(formatPlan(pruned).split('\n')).toEqual([
      'KIND   NAME           ACTION     VERSION',
      'agent  support-agent  unchanged  1',
      'tool   spare-order    delete     2',
      '    ~ pinned by run run-1: its versions stay until the run ends',
    ]);
    expect(planSummary(pruned)).toBe('deployed: 0 created, 0 updated, 1 deleted, 1 unchanged');
    const kept: DeployPlan = {
      applied: false,
      changes: [pruned.changes[0]],
      absent: [{ kind: 'tool', name: 'spare-order', version: 2 }],
    };
    expect(formatPlan(kept).split('\n')).toEqual([
      'KIND   NAME           ACTION       VERSION',
      'agent  support-agent  unchanged    1',
      'tool   spare-order    not in repo  2',
    ]);
    expect(planSummary(kept)).toBe(
      'dry run: 0 to create, 0 to update, 1 unchanged; nothing was stored; 1 not in the repo, kept (mt deploy --prune deletes them)',
    );
  });
});
