import { cpuMs } from './cpu.js';
import { runLoad, type LoadResult, type LoadSpec } from './load.js';

/**
 * One round of a CPU-cost measurement: 1 s of warm-up, then `spec`'s load, and what it served
 * with each named process's CPU time per request in µs (from /proc, so 10 ms ticks: rounds of a
 * few seconds).
 */
export async function costRound<K extends string>(spec: LoadSpec, pids: Record<K, number>): Promise<{ rps: number; us: Record<K, number>; load: LoadResult }> {
  await runLoad({ ...spec, durationS: 1 });
  const names = Object.keys(pids) as K[];
  const before = names.map((name) => cpuMs(pids[name]));
  const load = await runLoad(spec);
  const us = Object.fromEntries(names.map((name, i) => [name, ((cpuMs(pids[name]) - before[i]!) * 1000) / load.total])) as Record<K, number>;
  return { rps: load.rps, us, load };
}
