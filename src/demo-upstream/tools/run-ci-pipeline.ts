import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { reportProgress } from '../progress.js';
import { defineTool, textResult } from '../tool.js';

const TEST_COUNT = 342;

export const runCiPipeline = defineTool({
  name: 'run_ci_pipeline',
  description: `Runs the CI pipeline for a commit: ${TEST_COUNT} tests, about a minute.`,
  inputSchema: {
    commit: z.string().describe('Commit to test'),
    // ~175 ms a step makes the minute-scale job that tasks exist for; tests pass a small value.
    stepMs: z.number().min(0).max(60_000).default(175).describe('Time each test takes, in ms'),
  },
  handler: async ({ commit, stepMs }, { extra }) => {
    for (let n = 1; n <= TEST_COUNT; n++) {
      await reportProgress(extra, { progress: n, total: TEST_COUNT, message: `Running tests (${n}/${TEST_COUNT})` });
      await sleep(stepMs, undefined, { signal: extra.signal });
    }
    return textResult(`Pipeline passed for ${commit}: ${TEST_COUNT} tests`);
  },
});
