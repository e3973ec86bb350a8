import { didYouMean } from '../diagnostics/did-you-mean.js';
import {
  bindableTargets,
  type CompileContext,
  missingTargetDetail,
  overlaps,
  targetsUnknown,
} from './compile-context.js';
import type { Tool } from './resources.js';
import { checkLimit } from './limit-checks.js';
import { didYouMeanText } from './report.js';
import { keySpanOf, spanOf, type ValueTree } from './value-tree.js';

const TYPES = ['request', 'query', 'path'] as const;

/**
 * Checks a tool's fixed bindings against its connector (each fills a declared field, no two fill the same one),
 * and warns about a tool secret its connector would never send.
 */
export function checkTool(tool: Tool, tree: ValueTree, ctx: CompileContext): void {
  checkApprovalPolicy(tool, tree, ctx);
  checkLimit(tool.limit, tree, ctx.reporter);
  const connector = ctx.connectors.get(tool.connector)?.resource;
  if (tool.auth !== undefined && connector !== undefined && connector.auth !== 'Header') {
    ctx.reporter.report(
      'mtr:auth:unused',
      { tool: tool.name, connector: connector.name, auth: connector.auth },
      tree.file,
      keySpanOf(tree, ['auth']),
      'warning',
    );
  }
  const credentialHeader = tool.auth?.header.toLowerCase();
  if (credentialHeader !== undefined && connector !== undefined) {
    const param = (connector.parameters.header ?? []).find((p) => p.name.toLowerCase() === credentialHeader);
    if (param !== undefined) {
      ctx.reporter.report(
        'mtr:header:reserved',
        {
          name: param.name,
          reason: `the tool ${tool.name} sends its credential in it`,
          hint: `remove it from parameters.header of ${connector.name}: a credential never becomes a tool input`,
        },
        tree.file,
        spanOf(tree, ['auth', 'header']),
      );
    }
  }
  for (const type of TYPES) {
    const targets = Object.keys(tool.bindings[type]);
    targets.forEach((target, i) => {
      const path = ['bindings', type, target];
      const value = tool.bindings[type][target];
      if (type !== 'request' && (value === null || typeof value === 'object')) {
        ctx.reporter.report(
          'mtr:property:type',
          { key: `bindings.${type}:${target}`, expected: 'a string, number or boolean', actual: 'a structured value' },
          tree.file,
          spanOf(tree, path),
        );
      }
      const earlier = targets.slice(0, i).find((t) => overlaps(t, target));
      if (earlier !== undefined) {
        ctx.reporter.report(
          'mtr:binding:duplicate',
          { target, tool: tool.name, first: `bindings.${type}:${earlier}`, second: `bindings.${type}:${target}` },
          tree.file,
          keySpanOf(tree, path),
        );
      }
      if (!connector || targetsUnknown(connector, type)) return;
      const known = bindableTargets(connector, type);
      if (known.includes(target)) return;
      const guess = didYouMean(target, known);
      const mcpHint =
        connector.mcp !== undefined && type !== 'request'
          ? `bind the MCP tool's arguments with bindings.request:<argument>`
          : '';
      ctx.reporter.report(
        'mtr:binding:unknown-target',
        {
          target: `bindings.${type}:${target}`,
          detail: missingTargetDetail(connector, type, target),
          suggestion: guess ? didYouMeanText(guess) : known.length ? `it may bind ${known.join(', ')}` : mcpHint,
        },
        tree.file,
        keySpanOf(tree, path),
      );
    });
  }
}

/** An approval policy asks for at least one whole approver, and only on a tool whose calls need approval. */
function checkApprovalPolicy(tool: Tool, tree: ValueTree, ctx: CompileContext): void {
  const count = tool.approval?.count;
  if (count !== undefined && !(Number.isInteger(count) && count >= 1 && count <= 10)) {
    ctx.reporter.report(
      'mtr:property:type',
      { key: 'approval.count', expected: 'a whole number from 1 to 10', actual: String(count) },
      tree.file,
      spanOf(tree, ['approval', 'count']),
    );
  }
  if (tool.approval !== undefined && !tool.requiresApproval) {
    ctx.reporter.report(
      'mtr:property:type',
      {
        key: 'approval',
        expected: 'a policy on a tool with requiresApproval = true',
        actual: 'requiresApproval = false',
      },
      tree.file,
      keySpanOf(tree, ['approval']),
    );
  }
}
