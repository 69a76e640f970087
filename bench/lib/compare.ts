import { runLoad, type LoadResult, type LoadSpec } from './load.js';
import { median, round } from './stats.js';

export interface Variant {
  name: string;
  spec: LoadSpec;
}

export interface VariantSummary {
  /** Median over rounds. */
  rps: number;
  p50: number;
  p99: number;
  rounds: LoadResult[];
}

export interface CompareOptions {
  rounds: number;
  warmupS: number;
  /** Called between rounds (e.g. to let background work drain). */
  between?: () => Promise<void>;
  log: (line: string) => void;
}

/** Rounds interleaved across variants (A B C A B C …), so that machine noise hits all alike. */
export async function compare(variants: Variant[], options: CompareOptions): Promise<Record<string, VariantSummary>> {
  for (const v of variants) {
    if (options.warmupS > 0) await runLoad({ ...v.spec, durationS: options.warmupS });
  }
  const rounds: Record<string, LoadResult[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
  for (let r = 0; r < options.rounds; r++) {
    for (const v of variants) {
      await options.between?.();
      const result = await runLoad(v.spec);
      const bad = result.errors + result.timeouts + result.non2xx;
      const failed = bad ? ` (failed: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts)` : '';
      options.log(`    round ${r + 1} ${v.name}: ${round(result.rps, 0)} req/s p50 ${result.p50} ms p99 ${result.p99} ms${failed}`);
      rounds[v.name]!.push(result);
    }
  }
  return Object.fromEntries(
    variants.map((v) => {
      const rs = rounds[v.name]!;
      return [v.name, { rps: round(median(rs.map((x) => x.rps)), 0), p50: median(rs.map((x) => x.p50)), p99: median(rs.map((x) => x.p99)), rounds: rs }];
    }),
  );
}
