import type { MarkerCode } from './markers.js';

/** What an old-API site is, for the report: one word a person can filter on. */
export type SiteKind =
  | 'experimental-call'
  | 'raw-request'
  | 'task-augmented-call'
  | 'dialect-flow'
  | 'status-handler'
  | 'elicitation-handler'
  | 'status-word'
  | 'task-field'
  | 'method-reference'
  | 'task-params'
  | 'client-task-host'
  | 'old-task-shape'
  | 'error-check'
  | 'client-setup';

/** The kind of a site a transform rewrote, by transform. */
const REWRITTEN: Readonly<Record<string, SiteKind>> = {
  'dialect-poll-loop': 'dialect-flow',
  'call-tool-stream': 'experimental-call',
  'call-tool-task': 'task-augmented-call',
  'get-task-result': 'experimental-call',
  'get-task': 'experimental-call',
  'cancel-task': 'experimental-call',
  'task-augmented-call': 'task-augmented-call',
  'task-status-notifications': 'status-handler',
  'elicitation-handler': 'elicitation-handler',
  'task-fields': 'task-field',
  'task-statuses': 'status-word',
  'client-task-host': 'client-task-host',
};

/** The kind of a marked site, by marker code. */
const MARKED: Readonly<Record<MarkerCode, SiteKind>> = {
  'unresolved-client': 'experimental-call',
  'client-url': 'client-setup',
  'stream-shape': 'experimental-call',
  'mcp-error-check': 'error-check',
  'cancel-terminal': 'experimental-call',
  'task-shape': 'old-task-shape',
  'tasks-list': 'experimental-call',
  'cancel-result': 'experimental-call',
  'plain-result': 'task-augmented-call',
  'create-task-result': 'task-augmented-call',
  'dialect-create': 'dialect-flow',
  'status-notifications': 'status-handler',
  'elicitation-handler': 'elicitation-handler',
  'elicitation-moved': 'elicitation-handler',
  'sdk-client-unused': 'client-setup',
  'status-literal': 'status-word',
  'custom-transport': 'raw-request',
  'task-method': 'method-reference',
  'task-params': 'task-params',
  'client-task-host': 'client-task-host',
  'old-task-fields': 'old-task-shape',
};

/**
 * The kind of a report row's site: by the transform that rewrote it, or by its marker code; a
 * call the codemod could not resolve is a raw request unless it goes through `experimental.tasks`.
 */
export function siteKind(row: { code: string; transform: string }, siteText: string): SiteKind {
  if (row.code === 'rewritten') {
    const kind = REWRITTEN[row.transform] ?? 'experimental-call';
    return kind === 'experimental-call' && !siteText.includes('experimental') ? 'raw-request' : kind;
  }
  const kind = MARKED[row.code as MarkerCode] ?? 'method-reference';
  if (kind === 'experimental-call' && !siteText.includes('experimental')) return /\.request\s*\(/.test(siteText) ? 'raw-request' : kind;
  return kind;
}
