import { describe, expect, it } from 'vitest';
import { declaresToolTasks, resolvePolicy, type PolicySources } from '../../src/core/policy.js';
import { policyTable } from '../../src/core/policy-table.js';

const sources: PolicySources = {
  configured: { pinned: { mode: 'required' } },
  fallback: 'auto',
  autoWindowMs: 1_000,
};

describe('resolvePolicy', () => {
  it('applies the default over the taskSupport of an upstream that declares no tasks', () => {
    expect(resolvePolicy('report', sources, { declaresTasks: false, taskSupport: 'forbidden' })).toEqual({ policy: { mode: 'auto' }, source: 'default' });
    expect(resolvePolicy('report', sources, { declaresTasks: false, taskSupport: 'required' })).toEqual({ policy: { mode: 'auto' }, source: 'default' });
  });

  it("takes the taskSupport of an upstream that declares tasks, absent meaning forbidden", () => {
    expect(resolvePolicy('report', sources, { declaresTasks: true, taskSupport: 'optional' })).toEqual({ policy: { mode: 'optional' }, source: 'upstream' });
    expect(resolvePolicy('report', sources, { declaresTasks: true })).toEqual({ policy: { mode: 'forbidden' }, source: 'upstream' });
  });

  it('takes the policy file entry before anything the upstream says', () => {
    for (const declaresTasks of [true, false]) {
      expect(resolvePolicy('pinned', sources, { declaresTasks, taskSupport: 'forbidden' })).toEqual({ policy: { mode: 'required' }, source: 'policy file' });
    }
  });
});

describe('declaresToolTasks', () => {
  it('is true only for capabilities.tasks.requests.tools.call', () => {
    expect(declaresToolTasks({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } })).toBe(true);
    expect(declaresToolTasks({ tasks: { list: {}, cancel: {} } })).toBe(false);
    expect(declaresToolTasks({ tools: { listChanged: true } })).toBe(false);
    expect(declaresToolTasks({})).toBe(false);
  });
});

describe('policyTable', () => {
  it('gives each tool its policy, source and auto window, and lists policy entries naming no tool', () => {
    const table = policyTable(
      [
        { name: 'report', execution: { taskSupport: 'forbidden' } },
        { name: 'pinned', execution: { taskSupport: 'forbidden' } },
      ],
      false,
      { ...sources, configured: { ...sources.configured, gone: { mode: 'optional' } } },
    );
    expect(table).toEqual({
      upstreamDeclaresTasks: false,
      default: 'auto',
      tools: [
        { tool: 'report', mode: 'auto', source: 'default', syncWindowMs: 1_000, upstreamTaskSupport: 'forbidden' },
        { tool: 'pinned', mode: 'required', source: 'policy file', upstreamTaskSupport: 'forbidden' },
      ],
      unknownConfigured: ['gone'],
    });
  });
});

describe('policyTable with what the upstream speaks', () => {
  it('carries the upstream report and each tool\'s execution mode, as the gateway decides them', () => {
    const report = { protocol: '2025-11-25', pinned: false, tasks: true, sep2663Tasks: false };
    const table = policyTable(
      [
        { name: 'runs_itself', execution: { taskSupport: 'required' } },
        { name: 'plain', execution: { taskSupport: 'forbidden' } },
      ],
      true,
      sources,
      { report, execution: (tool) => (tool.execution?.taskSupport === 'required' ? 'native' : 'shim') },
    );
    expect(table.upstream).toEqual(report);
    expect(table.tools).toEqual([
      { tool: 'runs_itself', mode: 'required', source: 'upstream', upstreamTaskSupport: 'required', execution: 'native' },
      { tool: 'plain', mode: 'forbidden', source: 'upstream', upstreamTaskSupport: 'forbidden', execution: 'shim' },
    ]);
  });
});
