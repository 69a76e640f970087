/**
 * Top self-time functions of a V8 .cpuprofile (from `node --cpu-prof`).
 * Usage: node --import tsx bench/lib/profile-summary.ts FILE.cpuprofile [topN] [skipMs]
 * skipMs leaves out the first milliseconds of the profile (startup: module loading).
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg, skipArg] = process.argv.slice(2);
const skipUs = Number(skipArg ?? 0) * 1000;
const profile = JSON.parse(readFileSync(file!, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
let elapsed = 0;
profile.samples.forEach((id, i) => {
  elapsed += profile.timeDeltas[i] ?? 0;
  if (elapsed >= skipUs) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const idleIds = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
const all = [...self.values()].reduce((a, b) => a + b, 0);
// Percentages of busy time: idle samples are left out.
const total = [...self].filter(([id]) => !idleIds.has(id)).reduce((a, [, us]) => a + us, 0);
const byFn = new Map<string, number>();
for (const [id, us] of self) {
  if (idleIds.has(id)) continue;
  const f = byId.get(id)!.callFrame;
  const where = f.url ? `${f.url.replace(/^file:\/\/.*?\/(node_modules|src)\//, '$1/')}:${f.lineNumber + 1}` : '';
  const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
  byFn.set(key, (byFn.get(key) ?? 0) + us);
}
const byArea = new Map<string, number>();
for (const [key, us] of byFn) {
  const area = /node_modules\/(@[^/]+\/[^/]+|[^/]+)/.exec(key)?.[1] ?? (/ src\/([^/:]+)/.exec(key)?.[1] ? `src/${/ src\/([^/:]+)/.exec(key)![1]}` : key.startsWith('(') ? key.split(' ')[0]! : 'node internals');
  byArea.set(area, (byArea.get(area) ?? 0) + us);
}
const pct = (us: number): string => `${((100 * us) / total).toFixed(1)}%`;
console.log(`sampled ${(all / 1000).toFixed(0)} ms, busy ${(total / 1000).toFixed(0)} ms (percentages below are of busy time)`);
console.log('\nself time by area:');
for (const [k, us] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${pct(us).padStart(6)}  ${k}`);
console.log('\ntop self-time functions:');
for (const [k, us] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 30))) console.log(`  ${pct(us).padStart(6)}  ${k}`);
