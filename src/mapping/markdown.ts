import { TASK_STATUSES } from '../core/task.js';
import { FIELD_TABLE, type CanonicalField } from './fields.js';
import { METHOD_TABLE } from './methods.js';
import { CANCELLED_AS_ERROR, LEGACY_STATUS_TO_SEP2663, STATUS_TABLE, type DialectStatus } from './statuses.js';
import { TRANSITIONS } from './transitions.js';
import { UPSTREAM_CANCEL_GRACE_MS, UPSTREAM_CANCEL_MESSAGES, UPSTREAM_STATUS_TABLE, UPSTREAM_TASK_STATUSES } from './upstream-statuses.js';

/** Ends the generated part of docs/mapping.md; what follows it is prose the generator keeps. */
export const END_OF_GENERATED = '<!-- End of the generated part: what follows is written by hand and kept by `npm run docs:mapping`. -->';

/**
 * docs/mapping.md, its tables generated from the mapping tables themselves (`npm run docs:mapping`),
 * so the docs cannot say something the adapters do not do, followed by the hand-written part of
 * `existing` (the file as it is). A test fails when the generated part is stale.
 */
export function mappingDocument(existing: string): string {
  const at = existing.indexOf(END_OF_GENERATED);
  const handWritten = at < 0 ? '' : existing.slice(at + END_OF_GENERATED.length);
  return `${mappingMarkdown()}\n${END_OF_GENERATED}${handWritten}`;
}

/** The generated part of docs/mapping.md. */
function mappingMarkdown(): string {
  const lines: string[] = [
    '# Status, field and method mapping',
    '',
    '<!-- Generated from src/mapping/ by `npm run docs:mapping` down to the end marker. Do not edit that part by hand. -->',
    '',
    'One task record, three wires. The canonical statuses are SEP-2663\'s; each legacy wire renders them as below.',
    '',
    '## Statuses',
    '',
    '| canonical (SEP-2663) | MCP 2025-11-25 | tasks/create dialect |',
    '|---|---|---|',
  ];
  for (const status of TASK_STATUSES) {
    const row = STATUS_TABLE[status];
    const mcp = row.mcp20251125WhenToolError
      ? `\`${row.mcp20251125}\` (\`${row.mcp20251125WhenToolError}\` when the result has \`isError: true\`)`
      : `\`${row.mcp20251125}\``;
    const dialect =
      row.tasksCreate.notStarted === row.tasksCreate.started
        ? `\`${row.tasksCreate.started}\``
        : `\`${row.tasksCreate.notStarted}\` before a worker starts it, \`${row.tasksCreate.started}\` after`;
    lines.push(`| \`${row.sep2663}\` | ${mcp} | ${dialect} |`);
  }
  lines.push(
    '',
    `A cancelled task reads as dialect \`error\` with \`error = ${JSON.stringify(CANCELLED_AS_ERROR)}\`.`,
    '',
    '### Old status words, and what a migrated client compares against',
    '',
    '| dialect status | SEP-2663 status(es) |',
    '|---|---|',
  );
  for (const [old, modern] of Object.entries(LEGACY_STATUS_TO_SEP2663) as Array<[DialectStatus, readonly string[]]>) {
    lines.push(`| \`${old}\` | ${modern.map((s) => `\`${s}\``).join(', ')} |`);
  }
  lines.push('', '## Legal transitions', '', '| from | to |', '|---|---|');
  for (const status of TASK_STATUSES) {
    const to = TRANSITIONS[status];
    lines.push(`| \`${status}\` | ${to.length ? to.map((s) => `\`${s}\``).join(', ') : 'nothing (terminal)'} |`);
  }
  lines.push(
    '',
    '### Upstream task statuses (native and SEP-2663 execution)',
    '',
    'A task backed by an upstream task (2025-11-25 or SEP-2663) mirrors that task\'s status into its record:',
    '',
    '| upstream status | record | how (2025-11-25) | how (SEP-2663) |',
    '|---|---|---|---|',
  );
  for (const status of UPSTREAM_TASK_STATUSES) {
    const row = UPSTREAM_STATUS_TABLE[status];
    lines.push(`| \`${status}\` | ${row.record === 'live' ? 'unchanged (`working` / `input_required`)' : `\`${row.record}\``} | ${row.note} | ${row.sep2663} |`);
  }
  lines.push(
    '',
    "A cancel of such a task goes to the upstream's `tasks/cancel`; the record stays live until the upstream answers. Its `statusMessage`:",
    '',
    '| when | `statusMessage` |',
    '|---|---|',
    `| the cancel is on its way upstream | ${UPSTREAM_CANCEL_MESSAGES.awaiting} |`,
    `| the upstream confirmed (its task is \`cancelled\`) | ${UPSTREAM_CANCEL_MESSAGES.confirmed} |`,
    `| no confirmation within the grace | ${UPSTREAM_CANCEL_MESSAGES.unconfirmed(UPSTREAM_CANCEL_GRACE_MS)} (with the upstream's error when it refused) |`,
    '| the upstream task ended otherwise first | the record ends with that outcome (`completed`, `failed`) |',
  );
  lines.push('', '## Fields', '', '| canonical (SEP-2663) | MCP 2025-11-25 | tasks/create dialect |', '|---|---|---|');
  for (const field of Object.keys(FIELD_TABLE) as CanonicalField[]) {
    const row = FIELD_TABLE[field];
    lines.push(`| \`${row.sep2663}\` | \`${row.mcp20251125}\` | \`${row.tasksCreate}\` |`);
  }
  lines.push('', '## Methods', '', '| wire | old method | SEP-2663 | note |', '|---|---|---|---|');
  for (const row of METHOD_TABLE) {
    lines.push(`| ${row.wire} | \`${row.method}\` | ${row.sep2663 ? `\`${row.sep2663}\`` : 'none'} | ${row.note} | ${row.sep2663} |`);
  }
  return `${lines.join('\n')}\n`;
}
