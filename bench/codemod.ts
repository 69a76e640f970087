/**
 * Codemod benchmark: generates a repo of `--files` source files (default 5,000; a mix of old-API
 * MCP clients, look-alikes from other protocols, and ordinary code) with a tsconfig.json and the
 * SDK resolvable, then runs the codemod on it, dry-run and write, syntactic (`--no-types`) and
 * type-aware, `--runs` times each (default 3) in a fresh child process per run, and prints files
 * per second, CPU seconds and the child's peak RSS, with the medians.
 *
 *   npx tsx bench/codemod.ts [--files 5000] [--runs 3] [--chunk 200]
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function arg(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

// ---- the child: one codemod run, measured from inside -------------------------------------

if (process.argv[2] === '--child') {
  const [, , , mode, dir, chunk, analysis] = process.argv;
  const { runCodemod } = await import('../codemods/index.js');
  const started = performance.now();
  const { report } = await runCodemod({ path: dir!, dryRun: mode === 'dry-run', force: true, chunkSize: Number(chunk), noTypes: analysis === 'syntactic', stdout: () => {}, stderr: () => {} });
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage();
  const cpuMs = (cpu.user + cpu.system) / 1000;
  process.stdout.write(`${JSON.stringify({ elapsedMs, cpuMs, maxRssMb: process.resourceUsage().maxRSS / 1024, summary: report.summary })}\n`);
  process.exit(0);
}

// ---- the generated repo -------------------------------------------------------------------

const SDK_STREAM = (i: number): string => `import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

export async function run${i}(url: string, seconds: number): Promise<string> {
  const client = new Client({ name: 'bench-${i}', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  let text = '';
  for await (const message of client.experimental.tasks.callToolStream({ name: 'slow_compute', arguments: { seconds } }, CallToolResultSchema, { task: { ttl: 60_000 } })) {
    switch (message.type) {
      case 'taskStatus':
        console.log(message.task.status, message.task.pollInterval);
        break;
      case 'result':
        text = JSON.stringify(message.result.content);
        break;
      case 'error':
        console.error(message.error.message);
        break;
    }
  }
  const status = await client.experimental.tasks.getTask('t-${i}');
  await client.experimental.tasks.cancelTask(status.taskId);
  return text;
}
`;

const DIALECT = (i: number): string => `const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ResultSchema } = require('@modelcontextprotocol/sdk/types.js');

async function create${i}(url) {
  const client = new Client({ name: 'dialect-${i}', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const created = await client.request({ method: 'tasks/create', params: { name: 'slow_compute', arguments: { seconds: ${i % 5} } } }, ResultSchema);
  let task = created;
  while (task.status === 'pending' || task.status === 'running') {
    await new Promise((r) => setTimeout(r, task.pollInterval ?? 500));
    task = await client.request({ method: 'tasks/status', params: { taskId: created.taskId } }, ResultSchema);
  }
  if (task.status === 'done') {
    return task.result;
  } else {
    throw new Error(task.error.message);
  }
}

module.exports = { create${i} };
`;

const LOOK_ALIKE = (i: number): string => `// A job queue, not MCP: same words, nothing to rewrite.
export async function job${i}(queue: { request(m: object): Promise<{ status: string }> }, taskId: string) {
  let job = await queue.request({ method: 'tasks/get', params: { taskId } });
  while (job.status === 'pending') job = await queue.request({ method: 'tasks/get', params: { taskId } });
  return job.status === 'done';
}
`;

const ORDINARY = (i: number): string => {
  const fns = Array.from({ length: 6 + (i % 10) }, (_, k) => `
/** Helper ${k} of module ${i}. */
export function helper${i}_${k}(items: Array<{ id: number; name: string }>, limit = ${k + 3}): string[] {
  const out: string[] = [];
  for (const item of items) {
    if (item.id % ${k + 2} === 0 && out.length < limit) out.push(\`\${item.name}-${k}\`);
  }
  return out.sort((a, b) => a.localeCompare(b));
}
`).join('');
  return `import { readFileSync } from 'node:fs';\n\nexport const CONFIG_${i} = { retries: ${i % 7}, path: './data/${i}.json' };\n${fns}\nexport function load${i}(): unknown {\n  return JSON.parse(readFileSync(CONFIG_${i}.path, 'utf8'));\n}\n`;
};

function generate(files: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'codemod-bench-'));
  for (let i = 0; i < files; i++) {
    const sub = join(dir, 'packages', `pkg${i % 50}`, 'src');
    mkdirSync(sub, { recursive: true });
    const kind = i % 20;
    if (kind === 0) writeFileSync(join(sub, `client${i}.ts`), SDK_STREAM(i));
    else if (kind === 1) writeFileSync(join(sub, `dialect${i}.cjs`), DIALECT(i));
    else if (kind === 2) writeFileSync(join(sub, `jobs${i}.ts`), LOOK_ALIKE(i));
    else writeFileSync(join(sub, `module${i}.${i % 3 === 0 ? 'js' : 'ts'}`), ORDINARY(i));
  }
  // Never read: dependencies and build output.
  mkdirSync(join(dir, 'node_modules/dep'), { recursive: true });
  writeFileSync(join(dir, 'node_modules/dep/index.ts'), SDK_STREAM(0));
  // The type-aware mode resolves the SDK (and the zod types it names) as an installed app would.
  for (const dep of ['@modelcontextprotocol', 'zod']) symlinkSync(join(ROOT, 'node_modules', dep), join(dir, 'node_modules', dep), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, allowJs: true, noEmit: true, skipLibCheck: true }, include: ['packages'] }, null, 2));
  return dir;
}

interface Sample {
  elapsedMs: number;
  /** CPU time of the whole child (start-up included): steadier than wall time on a shared host. */
  cpuMs: number;
  maxRssMb: number;
  summary: { filesScanned: number; filesMatched: number; filesChanged: number; filesWithErrors: number; filesTyped: number };
}

type Analysis = 'syntactic' | 'types';

function child(mode: 'dry-run' | 'write', dir: string, chunk: number, analysis: Analysis): Sample {
  const result = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', mode, dir, String(chunk), analysis], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`child ${mode} failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as Sample;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const files = arg('files', 5000);
const runs = arg('runs', 3);
const chunk = arg('chunk', 200);
const template = generate(files);
type Mode = 'dry-run' | 'write';
const ANALYSES: readonly Analysis[] = ['syntactic', 'types'];
const results = new Map<string, Sample[]>();
const key = (analysis: Analysis, mode: Mode): string => `${analysis} ${mode}`;
try {
  for (let r = 0; r < runs; r++) {
    for (const analysis of ANALYSES) {
      const push = (mode: Mode, sample: Sample): void => void results.set(key(analysis, mode), [...(results.get(key(analysis, mode)) ?? []), sample]);
      push('dry-run', child('dry-run', template, chunk, analysis));
      const copy = mkdtempSync(join(tmpdir(), 'codemod-bench-write-'));
      cpSync(template, copy, { recursive: true, verbatimSymlinks: true });
      try {
        push('write', child('write', copy, chunk, analysis));
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    }
  }
} finally {
  rmSync(template, { recursive: true, force: true });
}

const first = results.get(key('syntactic', 'dry-run'))![0]!.summary;
process.stdout.write(`codemod benchmark: ${first.filesScanned} files (${first.filesMatched} matched the prefilter, ${first.filesChanged} rewritten), chunk ${chunk}, ${runs} runs, node ${process.version}\n`);
process.stdout.write(`host: ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at the end\n`);
process.stdout.write('| analysis | mode | run | files typed | wall s | files/s (wall) | CPU s | peak RSS (MB) |\n|---|---|---|---|---|---|---|---|\n');
for (const [name, samples] of results) {
  const [analysis, mode] = name.split(' ');
  samples.forEach((s, i) => {
    process.stdout.write(`| ${analysis} | ${mode} | ${i + 1} | ${s.summary.filesTyped} | ${(s.elapsedMs / 1000).toFixed(2)} | ${Math.round(s.summary.filesScanned / (s.elapsedMs / 1000))} | ${(s.cpuMs / 1000).toFixed(2)} | ${s.maxRssMb.toFixed(0)} |\n`);
  });
}
for (const [name, samples] of results) {
  const fps = median(samples.map((s) => s.summary.filesScanned / (s.elapsedMs / 1000)));
  const rss = median(samples.map((s) => s.maxRssMb));
  const cpu = median(samples.map((s) => s.cpuMs / 1000));
  process.stdout.write(`median ${name}: ${Math.round(fps)} files/s (wall), ${cpu.toFixed(1)} CPU s, peak RSS ${rss.toFixed(0)} MB\n`);
}
