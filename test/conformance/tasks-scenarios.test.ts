import { beforeAll, describe, expect, it } from 'vitest';
import { ensureSuite, runOnStore, tasksScenarios, SUITE_VERSION } from '../../scripts/conformance.js';

/** What the pinned suite release checks across its tasks scenarios (docs/conformance.md). */
const TASKS_CHECKS = 44;
/** Installing the suite and Node 22 from npm on a fresh machine, with room for a slow registry. */
const INSTALL_TIMEOUT_MS = 5 * 60_000;
/** Ten scenarios take under a minute per store on a loaded two-core host; the bound leaves room. */
const RUN_TIMEOUT_MS = 5 * 60_000;

let scenarios: string[] = [];

beforeAll(async () => {
  await ensureSuite();
  scenarios = await tasksScenarios();
}, INSTALL_TIMEOUT_MS);

describe.concurrent.each(['embedded', 'redis'] as const)(`@modelcontextprotocol/conformance ${SUITE_VERSION} tasks scenarios (%s store)`, (store) => {
  it(`passes all ${TASKS_CHECKS} tasks checks`, { timeout: RUN_TIMEOUT_MS }, async () => {
    expect(scenarios).toContain('tasks-mrtr-composition');
    const outcomes = await runOnStore(store, scenarios);
    const failures = outcomes.flatMap((o) => o.failures.map((f) => `${o.scenario} ${f.id}: ${f.message}`));
    expect(failures).toEqual([]);
    expect(outcomes.reduce((n, o) => n + o.passed, 0)).toBe(TASKS_CHECKS);
  });
});
