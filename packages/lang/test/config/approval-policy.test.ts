import { describe, expect, it } from 'vitest';
import { compile, refundConnector, where } from './helpers.js';

// A tool's approval policy (docs/roles.md): read into the tool's content only when written, and checked.
const files = (tool: string) => ({
  'connectors/open-api/refund.mtr': refundConnector,
  'external-operations/open-api/refund.mtr': `connector = @ref("refund")\nguidance = "g"\n${tool}`,
});

describe('approval policies', () => {
  it('reads approvers, count and excludeStarter into the tool', () => {
    const repo = compile(
      files(
        'requiresApproval = true\napproval.approvers = ["approver", "k-1"]\napproval.count = 2\napproval.excludeStarter = true\n',
      ),
    );
    expect(where(repo.diagnostics)).toEqual([]);
    expect(repo.tools[0]?.approval).toEqual({ approvers: ['approver', 'k-1'], count: 2, excludeStarter: true });
  });

  it('leaves a tool without a policy as it was (no approval property, so the same version hash)', () => {
    const repo = compile(files('requiresApproval = true\n'));
    expect(repo.tools[0]).not.toHaveProperty('approval');
  });

  it('refuses a count that is not a whole number from 1 to 10, and a policy on a tool without approval', () => {
    expect(where(compile(files('requiresApproval = true\napproval.count = 0\n')).diagnostics)).toEqual([
      'external-operations/open-api/refund.mtr:4:18 mtr:property:type',
    ]);
    expect(where(compile(files('requiresApproval = true\napproval.count = 1.5\n')).diagnostics)).toHaveLength(1);
    expect(where(compile(files('approval.excludeStarter = true\n')).diagnostics)).toEqual([
      'external-operations/open-api/refund.mtr:3:1 mtr:property:type',
    ]);
  });
});
