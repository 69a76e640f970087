import type { DemoTool } from '../tool.js';
import { confirmDelete } from './confirm-delete.js';
import { failingJob } from './failing-job.js';
import { greet } from './greet.js';
import { multiInput } from './multi-input.js';
import { protocolErrorJob } from './protocol-error-job.js';
import { runCiPipeline } from './run-ci-pipeline.js';
import { slowCompute } from './slow-compute.js';
import { testToolWithTask } from './test-tool-with-task.js';

/** Every tool the demo upstream serves, in tools/list order. */
export const DEMO_TOOLS: readonly DemoTool[] = [
  greet,
  slowCompute,
  failingJob,
  protocolErrorJob,
  confirmDelete,
  multiInput,
  runCiPipeline,
  testToolWithTask,
];
