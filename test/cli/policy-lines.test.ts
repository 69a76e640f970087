import { describe, expect, it } from 'vitest';
import { policyLines } from '../../src/cli/policy-lines.js';
import type { PolicyTable } from '../../src/core/policy-table.js';

const TABLE: PolicyTable = {
  upstream: { protocol: '2025-11-25', pinned: false, tasks: true, sep2663Tasks: false },
  upstreamDeclaresTasks: true,
  default: 'auto',
  tools: [
    { tool: 'native_work', mode: 'required', source: 'upstream', upstreamTaskSupport: 'required', execution: 'native' },
    { tool: 'greet', mode: 'auto', source: 'policy file', syncWindowMs: 1_000, upstreamTaskSupport: 'forbidden', execution: 'shim' },
  ],
  unknownConfigured: [],
};

describe('the start-up lines of the policy table', () => {
  it('say what the upstream speaks, then one row per tool with its policy, execution mode and source', () => {
    expect(policyLines(TABLE)).toEqual({
      upstream: ['  protocol: 2025-11-25 (discovered), runs tool tasks itself (capabilities.tasks)'],
      out: [
        '  policies: 2 upstream tools; the upstream declares tasks: its taskSupport applies where the policy file names no tool',
        '    tool         policy                 execution  source',
        '    native_work  required               native     upstream',
        '    greet        auto (1000 ms window)  shim       policy file (upstream says forbidden)',
      ],
      warnings: [],
    });
  });

  it('name what could not be learned about the upstream, and a pinned protocol as pinned', () => {
    const pinned = { ...TABLE, upstream: { protocol: '2026-07-28', pinned: true, tasks: false, sep2663Tasks: false, problem: 'the upstream did not answer server/discover' } };
    expect(policyLines(pinned).upstream).toEqual(['  protocol: 2026-07-28 (pinned); the upstream did not answer server/discover']);
    const sep = { ...TABLE, upstreamDeclaresTasks: false, upstream: { protocol: '2026-07-28', pinned: false, tasks: false, sep2663Tasks: true } };
    expect(policyLines(sep).upstream).toEqual(['  protocol: 2026-07-28 (discovered), runs tool tasks itself (SEP-2663 tasks extension)']);
    // Such an upstream decides per call; the policy decides when a client gets a task.
    expect(policyLines(sep).out[0]).toContain('the upstream decides per call whether it makes a task');
  });
});
