import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { ScenarioResult } from './context.js';

const BEGIN = '<!-- bench:generated:begin (npm run bench rewrites this section) -->';
const END = '<!-- bench:generated:end -->';

export interface Machine {
  nproc: number;
  cpu: string;
  node: string;
  date: string;
  command: string;
  /** 1/5/15-minute load averages: other work on the host during the run. */
  load: string;
  settings: string;
}

function table(rows: Array<Record<string, string | number>>): string {
  if (rows.length === 0) return '';
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const line = (cells: Array<string | number | undefined>) => `| ${cells.map((c) => (c === undefined ? '' : String(c))).join(' | ')} |`;
  return [line(cols), line(cols.map(() => '---')), ...rows.map((r) => line(cols.map((c) => r[c])))].join('\n');
}

const verdict = (pass: boolean | null): string => (pass === null ? 'info' : pass ? '**pass**' : '**MISS**');

export function renderSection(machine: Machine, results: ScenarioResult[], failures: Array<{ name: string; error: string }>): string {
  const out: string[] = [BEGIN, '## Results (generated)', ''];
  out.push(`- Command: \`${machine.command}\` (${machine.settings})`);
  out.push(`- Machine: ${machine.nproc} cores (\`nproc\`), ${machine.cpu}, Node ${machine.node}`);
  out.push(`- Date: ${machine.date}`);
  out.push(`- Host load average (other processes share the 2 cores): ${machine.load}. Absolute numbers swing with it; the ratios come from interleaved rounds of the same run.`);
  out.push('- Everything (Redis, upstream, shim, baselines, autocannon in its own process, the bench) on the same host, loopback only; medians of the rounds.');
  out.push('', '### Targets', '');
  out.push(table(results.flatMap((r) => r.targets.map((t) => ({ scenario: r.name, target: t.target, measured: t.value, verdict: verdict(t.pass) })))));
  for (const f of failures) out.push(`\nScenario \`${f.name}\` failed: \`${f.error.replace(/\n/g, ' ').slice(0, 300)}\``);
  for (const r of results) {
    out.push('', `### ${r.title}`, '');
    if (r.rows.length) out.push(table(r.rows), '');
    for (const n of r.notes) out.push(`- ${n}`);
  }
  out.push('', END);
  return out.join('\n');
}

/** Replaces the generated section of docs/benchmarks.md, keeping everything else (e.g. "Codemod"). */
export function writeDoc(path: string, section: string): void {
  const intro = '# Benchmarks\n\nHow fast the shim is next to what a user would run instead, measured in one run by `npm run bench` (bench/run.ts).\n';
  const current = existsSync(path) ? readFileSync(path, 'utf8') : intro;
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const next = start >= 0 && end > start ? `${current.slice(0, start)}${section}${current.slice(end + END.length)}` : `${current.trimEnd()}\n\n${section}\n`;
  writeFileSync(path, next);
}
