import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { ScenarioResult } from './context.js';
import { median, round } from './stats.js';

/** How many full runs a median is taken over, and how many the history keeps. */
export const RUNS_PER_VERDICT = 3;
const KEPT_RUNS = 10;

/** One full `npm run bench`: the figure of every target that has one, by `scenario: target`. */
export interface RecordedRun {
  date: string;
  commit: string;
  settings: string;
  figures: Record<string, number>;
}

export const figureKey = (scenario: string, target: string): string => `${scenario}: ${target}`;

export function readHistory(path: string): RecordedRun[] {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as RecordedRun[]) : [];
}

/** Appends a full run's figures (oldest first, the last KEPT_RUNS kept) and returns the history. */
export function recordRun(path: string, run: Omit<RecordedRun, 'figures'>, results: ScenarioResult[]): RecordedRun[] {
  const figures: Record<string, number> = {};
  for (const r of results) for (const t of r.targets) if (t.figure) figures[figureKey(r.name, t.target)] = t.figure.value;
  const history = [...readHistory(path), { ...run, figures }].slice(-KEPT_RUNS);
  writeFileSync(path, `${JSON.stringify(history, null, 2)}\n`);
  return history;
}

/** The target's figure in the last RUNS_PER_VERDICT full runs that measured it (oldest first), and their median. */
export function recentFigures(history: RecordedRun[], key: string): { values: number[]; median: number } | undefined {
  const values = history
    .map((run) => run.figures[key])
    .filter((v): v is number => v !== undefined)
    .slice(-RUNS_PER_VERDICT);
  return values.length === 0 ? undefined : { values, median: round(median(values), 3) };
}
