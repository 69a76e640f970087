/**
 * Helpers for the dashboard, metrics and cutover tests: a tokens file, the dashboard's JSON API,
 * and raw requests on an existing legacy session through another replica.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSse, type LegacySession } from './legacy-client.js';
import { pollUntil, type Json } from './sep2663-client.js';

/** Writes `{"<token>": "<principal>"}` to a fresh file and returns its path. */
export function writeTokensFile(tokens: Record<string, string>): string {
  const path = join(mkdtempSync(join(tmpdir(), 'mts-tokens-')), 'tokens.json');
  writeFileSync(path, JSON.stringify(tokens));
  return path;
}

export async function dashboardJson(baseUrl: string, path: string, token?: string): Promise<Json> {
  const res = await fetch(`${baseUrl}/dashboard/api/${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (res.status !== 200) throw new Error(`GET /dashboard/api/${path}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

/** Polls a dashboard API path until `predicate` holds (the recorder flushes every second). */
export function waitForDashboard(baseUrl: string, path: string, predicate: (body: Json) => boolean, timeoutMs = 10_000): Promise<Json> {
  return pollUntil(() => dashboardJson(baseUrl, path).catch(() => undefined), (body) => body !== undefined && predicate(body), {
    timeoutMs,
    intervalMs: 200,
  });
}

let nextId = 10_000;

/** A request on `session` sent to another replica's endpoint (sessions live in the shared store). */
export async function postOn(url: string, session: LegacySession, method: string, params: Record<string, unknown> = {}): Promise<{ status: number; headers: Headers; body: Json }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: session.headers(),
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
  });
  const text = await res.text();
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    return { status: res.status, headers: res.headers, body: parseSse(text).find((e) => e.message && ('result' in e.message || 'error' in e.message))?.message };
  }
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}
