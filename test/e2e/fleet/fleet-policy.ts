import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_TOOL_POLICIES } from '../../../src/demo-upstream/policies.js';

/** Short enough that a killed replica's tasks settle in seconds; long enough not to trip on a loaded host. */
export const JOB_LOCK_MS = 3_000;

/**
 * The demo policies with tasks created at once for slow_compute (no auto window to wait out),
 * and two tools declared idempotent: one that only works (run_ci_pipeline) and one that asks
 * for input first (test_tool_with_task, made optional so that it asks inside its task: a required
 * one asks before the task exists, by MRTR). A lost run of those is re-run; of any other, failed.
 */
export function writeFleetPolicy(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mts-fleet-')), 'policy.json');
  writeFileSync(
    file,
    JSON.stringify({
      tools: {
        ...DEMO_TOOL_POLICIES,
        slow_compute: 'optional',
        run_ci_pipeline: { mode: 'required', idempotent: true },
        test_tool_with_task: { mode: 'optional', idempotent: true },
      },
    }),
  );
  return file;
}

/** Arguments for a shim of the fleet: the policy above and a short job lock. */
export function fleetArgs(policyFile: string, lockMs = JOB_LOCK_MS): string[] {
  return ['--policy', policyFile, '--job-lock-ms', String(lockMs)];
}

export const LOST_MESSAGE = /execution was lost/i;
