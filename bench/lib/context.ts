import type { RedisServer } from './servers.js';
import type { Served } from './proc.js';
import type { SeedSummary } from './seed-traffic.js';

export interface BenchContext {
  redis: RedisServer;
  upstream: Served;
  shim: Served;
  sdk: Served;
  bare: Served;
  pipe: Served;
  policy: string;
  workDir: string;
  rounds: number;
  durationS: number;
  connections: number;
  log: (line: string) => void;
  /** The week of traffic recorded before the shim started (for the dashboard scenario). */
  seeded?: SeedSummary;
}

export interface TargetCheck {
  target: string;
  value: string;
  pass: boolean | null;
  /**
   * The one number the target is judged on, with its line: a figure that swings with the host is
   * judged on the median of the last full runs (bench/lib/history.ts), not on one run.
   */
  figure?: Figure;
}

/** A measured number and the side of the line it must be on. */
export type Figure = { value: number } & ({ atLeast: number } | { atMost: number } | { under: number });

export interface ScenarioResult {
  name: string;
  title: string;
  /** Rows of the results table: variant → metrics. */
  rows: Array<Record<string, string | number>>;
  targets: TargetCheck[];
  notes: string[];
  raw?: unknown;
}
