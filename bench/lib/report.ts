import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { ScenarioResult, TargetCheck } from './context.js';
import { figureKey, recentFigures, RUNS_PER_VERDICT, type RecordedRun } from './history.js';
import { meets } from './target.js';

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

/**
 * One row of the targets table. A target with a figure that the last RUNS_PER_VERDICT full runs all
 * measured is judged on their median (decision 0012: one run on this host decides nothing near the
 * line); any other on this run.
 */
function targetRow(scenario: string, t: TargetCheck, history: RecordedRun[]): Record<string, string> {
  const recent = t.figure ? recentFigures(history, figureKey(scenario, t.target)) : undefined;
  const judged = t.figure && recent && recent.values.length === RUNS_PER_VERDICT ? meets(t.figure, recent.median) : t.pass;
  return {
    scenario,
    target: t.target,
    'this run': t.pass === null ? t.value : `${t.value} (${t.pass ? 'pass' : 'MISS'})`,
    [`last ${RUNS_PER_VERDICT} full runs → median`]: recent ? `${recent.values.join(' · ')} → ${recent.median}` : '—',
    verdict: verdict(judged),
  };
}

export function renderSection(machine: Machine, results: ScenarioResult[], failures: Array<{ name: string; error: string }>, history: RecordedRun[]): string {
  const out: string[] = [BEGIN, '## Results (generated)', ''];
  out.push(`- Command: \`${machine.command}\` (${machine.settings})`);
  out.push(`- Machine: ${machine.nproc} cores (\`nproc\`), ${machine.cpu}, Node ${machine.node}`);
  out.push(`- Date: ${machine.date}`);
  out.push(`- Host load average (other processes share the 2 cores): ${machine.load}. Absolute numbers swing with it; the ratios come from interleaved rounds of the same run.`);
  out.push('- Everything (Redis, upstream, shim, baselines, autocannon in its own process, the bench) on the same host, loopback only; medians of the rounds.');
  out.push('', '### Targets', '');
  out.push(
    `The verdict of a target with one figure is on the median of that figure over the last ${RUNS_PER_VERDICT} full runs (bench/results/history.json, this one included) once ${RUNS_PER_VERDICT} runs have measured it; the others, and this run's own verdict beside its figure, are on this run alone.`,
    '',
  );
  out.push(table(results.flatMap((r) => r.targets.map((t) => targetRow(r.name, t, history)))));
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
