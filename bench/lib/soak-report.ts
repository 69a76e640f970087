/** The soak's report: a JSON record and a generated section of docs/benchmarks.md. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export interface SoakSample {
  atS: number;
  replicaRssMiB: number[];
  redisUsedMiB: number;
  redisKeys: number;
  inFlight: number;
  completed: number;
  polls: number;
  errors: number;
  openStreams: number;
  notifications: number;
}

export interface SoakInput {
  command: string;
  date: string;
  node: string;
  nproc: number;
  load: string;
  settings: { tasks: number; streams: number; durationS: number; taskSeconds: { min: number; max: number } };
  samples: SoakSample[];
  created: number;
  completed: number;
  stuck: Array<{ taskId: string; status: string; ageS: number }>;
  errors: Array<{ kind: string; count: number }>;
  notifications: number;
  reopened: number;
}

const BEGIN = '<!-- soak:generated:begin (npm run bench:soak rewrites this section) -->';
const END = '<!-- soak:generated:end -->';

export function renderSoak(input: SoakInput): { json: SoakInput; markdown: string; verdict: string; pass: boolean } {
  const errors = input.errors.reduce((n, e) => n + e.count, 0);
  const pass = errors === 0 && input.stuck.length === 0;
  const verdict = `${errors} errors, ${input.stuck.length} stuck tasks, ${input.completed}/${input.created} tasks completed`;
  const { tasks, streams, durationS, taskSeconds } = input.settings;
  const first = input.samples[0];
  const peak = (pick: (s: SoakSample) => number): number => Math.max(...input.samples.map(pick));
  const out = [
    BEGIN,
    '## Soak (generated)',
    '',
    `- Command: \`${input.command}\` (${tasks} tasks in flight on \`slow_compute\` of ${taskSeconds.min}–${taskSeconds.max} s, each polled at its pollIntervalMs on alternating replicas; ${streams} listen streams of 5 tasks each, reopened on the other replica when their tasks end; ${durationS} s, then a drain)`,
    `- Machine: ${input.nproc} cores, Node ${input.node}; ${input.date}; load average ${input.load}`,
    `- Two replicas and one Redis on the same host; memory is each replica's RSS (\`/proc/<pid>/status\`) and Redis \`used_memory\`.`,
    '',
    '| target | measured | verdict |',
    '| --- | --- | --- |',
    `| errors = 0 | ${errors} | ${errors === 0 ? '**pass**' : '**MISS**'} |`,
    `| stuck tasks = 0 | ${input.stuck.length} | ${input.stuck.length === 0 ? '**pass**' : '**MISS**'} |`,
    `| (info) tasks completed | ${input.completed} of ${input.created} created | info |`,
    `| (info) listen notifications delivered | ${input.notifications} (${input.reopened} streams reopened after their tasks ended) | info |`,
    `| (info) replica RSS, first → peak MiB | ${first?.replicaRssMiB.map((v, i) => `${v} → ${peak((s) => s.replicaRssMiB[i] ?? 0)}`).join(', ')} | info |`,
    `| (info) Redis used_memory, first → peak MiB | ${first?.redisUsedMiB} → ${peak((s) => s.redisUsedMiB)} | info |`,
    '',
    '| t (s) | replica RSS MiB | Redis MiB | Redis keys | tasks in flight | completed | polls | open streams | notifications | errors |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...input.samples.map(
      (s) => `| ${s.atS} | ${s.replicaRssMiB.join(' / ')} | ${s.redisUsedMiB} | ${s.redisKeys} | ${s.inFlight} | ${s.completed} | ${s.polls} | ${s.openStreams} | ${s.notifications} | ${s.errors} |`,
    ),
  ];
  if (input.errors.length) out.push('', 'Errors by kind:', '', ...input.errors.map((e) => `- ${e.count} × ${e.kind}`));
  if (input.stuck.length) out.push('', 'Stuck tasks:', '', ...input.stuck.slice(0, 20).map((t) => `- ${t.taskId}: ${t.status} after ${t.ageS} s`));
  out.push('', END);
  return { json: input, markdown: out.join('\n'), verdict, pass };
}

/** Replaces the soak section of docs/benchmarks.md, or appends it. */
export function writeSoakDoc(path: string, section: string): void {
  const current = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n';
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const next = start >= 0 && end > start ? `${current.slice(0, start)}${section}${current.slice(end + END.length)}` : `${current.trimEnd()}\n\n${section}\n`;
  writeFileSync(path, next);
}
