import { describe, expect, it } from 'vitest';
import { DEMO_TOOL_POLICIES } from '../../src/demo-upstream/policies.js';
import { DEMO_TOOLS } from '../../src/demo-upstream/tools/index.js';

describe('demo tool policies', () => {
  it('give every served tool exactly one policy', () => {
    expect(Object.keys(DEMO_TOOL_POLICIES).sort()).toEqual(DEMO_TOOLS.map((tool) => tool.name).sort());
  });

  it('match the architecture document', () => {
    expect(DEMO_TOOL_POLICIES).toEqual({
      greet: 'forbidden',
      slow_compute: 'auto',
      protocol_error_job: 'optional',
      confirm_delete: 'optional',
      multi_input: 'optional',
      failing_job: 'required',
      test_tool_with_task: 'required',
      run_ci_pipeline: 'required',
    });
  });
});
