import type { TaskPolicy } from '../core/policy.js';

/**
 * How the shim treats each demo tool.
 * The demo upstream itself runs every call synchronously; this table is what `npm start`, the
 * docs and the tests hand to the shim so that they all agree.
 */
export const DEMO_TOOL_POLICIES: Record<string, TaskPolicy> = {
  greet: 'forbidden',
  slow_compute: 'auto',
  protocol_error_job: 'optional',
  confirm_delete: 'optional',
  multi_input: 'optional',
  failing_job: 'required',
  test_tool_with_task: 'required',
  run_ci_pipeline: 'required',
};
