import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScenarioResult } from '../../bench/lib/context.js';
import { readHistory, recordRun } from '../../bench/lib/history.js';
import { renderSection, type Machine } from '../../bench/lib/report.js';
import { figureTarget, ratioTarget } from '../../bench/lib/target.js';

const MACHINE: Machine = { nproc: 2, cpu: 'test', node: 'v20', date: 'now', command: 'npm run bench', load: '0', settings: '5 rounds' };
const dirs: string[] = [];
const historyFile = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'mts-bench-history-'));
  dirs.push(dir);
  return join(dir, 'history.json');
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** One full run's results: a throughput ratio, a latency, and a target without a figure. */
function run(passthrough: number, p99: number): ScenarioResult[] {
  return [
    {
      name: 'passthrough',
      title: 'Passthrough',
      rows: [],
      notes: [],
      targets: [ratioTarget('passthrough ≥ 0.9× pipe proxy throughput', passthrough, 0.9), { target: 'all deliveries arrive', value: '3000/3000', pass: true }],
    },
    { name: 'tasks-get', title: 'tasks/get', rows: [], notes: [], targets: [figureTarget('tasks/get p99 < 5 ms at half of peak', `${p99} ms`, { value: p99, under: 5 })] },
  ];
}

/** The targets table's row of `target`, as its cells. */
function row(section: string, target: string): string[] {
  const line = section.split('\n').find((l) => l.includes(`| ${target} |`));
  if (!line) throw new Error(`no row for ${target}`);
  return line.split('|').slice(1, -1).map((cell) => cell.trim());
}

describe('benchmark verdicts over several full runs', () => {
  it('judges a figure on the median of the last three full runs, and shows this run beside it', () => {
    const file = historyFile();
    const runs = [run(0.914, 6.94), run(1.013, 3.89), run(0.882, 4.55)];
    let history = readHistory(file);
    for (const [i, results] of runs.entries()) history = recordRun(file, { date: `d${i}`, commit: `c${i}`, settings: '5 rounds' }, results);

    const section = renderSection(MACHINE, runs[2]!, [], history);
    expect(row(section, 'passthrough ≥ 0.9× pipe proxy throughput')).toEqual([
      'passthrough',
      'passthrough ≥ 0.9× pipe proxy throughput',
      '0.882× (MISS)',
      '0.914 · 1.013 · 0.882 → 0.914',
      '**pass**',
    ]);
    expect(row(section, 'tasks/get p99 < 5 ms at half of peak').slice(2)).toEqual(['4.55 ms (pass)', '6.94 · 3.89 · 4.55 → 4.55', '**pass**']);
    // No figure: judged on this run alone.
    expect(row(section, 'all deliveries arrive').slice(2)).toEqual(['3000/3000 (pass)', '—', '**pass**']);
  });

  it('misses when the median misses, although this run passes', () => {
    const file = historyFile();
    let history = readHistory(file);
    const runs = [run(0.85, 1), run(0.86, 1), run(0.95, 1)];
    for (const [i, results] of runs.entries()) history = recordRun(file, { date: `d${i}`, commit: `c${i}`, settings: '5 rounds' }, results);
    expect(row(renderSection(MACHINE, runs[2]!, [], history), 'passthrough ≥ 0.9× pipe proxy throughput').slice(2)).toEqual([
      '0.95× (pass)',
      '0.85 · 0.86 · 0.95 → 0.86',
      '**MISS**',
    ]);
  });

  it('judges on this run until three full runs have measured the figure, and keeps the last ten', () => {
    const file = historyFile();
    recordRun(file, { date: 'd0', commit: 'c0', settings: '5 rounds' }, run(0.95, 1));
    const history = recordRun(file, { date: 'd1', commit: 'c1', settings: '5 rounds' }, run(0.85, 1));
    expect(row(renderSection(MACHINE, run(0.85, 1), [], history), 'passthrough ≥ 0.9× pipe proxy throughput').slice(3)).toEqual(['0.95 · 0.85 → 0.9', '**MISS**']);
    for (let i = 2; i < 12; i++) recordRun(file, { date: `d${i}`, commit: `c${i}`, settings: '5 rounds' }, run(1, 1));
    expect(readHistory(file).map((r) => r.date)).toEqual(['d2', 'd3', 'd4', 'd5', 'd6', 'd7', 'd8', 'd9', 'd10', 'd11']);
  });
});
