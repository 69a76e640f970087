import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type ShimConfig } from '../../src/config/schema.js';
import { CutoverControls } from '../../src/cutover/controls.js';
import { CutoverStage } from '../../src/cutover/stage.js';
import { ErrorCode } from '../../src/core/errors.js';

const GUIDE = 'https://docs.example.com/migrate';
const NOW = Date.parse('2026-06-01T14:30:00Z');

function stage(settings: Partial<ShimConfig>): CutoverStage {
  return new CutoverStage(new CutoverControls({ ...DEFAULT_CONFIG, legacySunset: '2027-01-01', migrationGuideUrl: GUIDE, ...settings }), () => NOW);
}

/** A real response object, never written to: the stage only sets headers on it. */
function response(): ServerResponse {
  return new ServerResponse(new IncomingMessage(new Socket()));
}

const request = (method: string, params: Record<string, unknown> = {}, id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params });
const TASK_REQUESTS = [
  request('tools/call', { name: 'build', task: {} }),
  request('tasks/get', { taskId: 't' }),
  request('tasks/result', { taskId: 't' }),
  request('tasks/list'),
  request('tasks/cancel', { taskId: 't' }),
  request('tasks/create', { name: 'build' }),
  request('tasks/status', { taskId: 't' }),
];
const NON_TASK = [request('initialize', { protocolVersion: '2025-11-25' }), request('tools/list'), request('tools/call', { name: 'greet' }), request('ping')];

describe('the cutover stage in front of the legacy adapter', () => {
  it('lets every old-API request through in mode on, with the deprecation headers set', () => {
    const s = stage({ legacy: 'on' });
    for (const message of [...TASK_REQUESTS, ...NON_TASK]) {
      const res = response();
      expect(s.legacy(res, message), message.method).toBeUndefined();
      expect(res.getHeader('sunset')).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
    }
  });

  it('refuses every task request in mode off with HTTP 410 and -32013 naming the migration guide, and nothing else', () => {
    const s = stage({ legacy: 'off' });
    for (const message of TASK_REQUESTS) {
      const reply = s.legacy(response(), message);
      expect(reply, message.method).toMatchObject({ kind: 'json', status: 410 });
      const body = (reply as { body: { id: unknown; error: { code: number; message: string; data: unknown } } }).body;
      expect(body.id).toBe(1);
      expect(body.error.code).toBe(ErrorCode.LegacyTasksOff);
      expect(body.error.code).toBe(-32013);
      expect(body.error.message).toContain('docs/migration.md');
      expect(body.error.message).toContain(GUIDE);
      expect(body.error.data).toMatchObject({ reason: 'legacy-off', migrationGuide: GUIDE });
    }
    for (const message of NON_TASK) expect(s.legacy(response(), message), message.method).toBeUndefined();
  });

  it('lets notifications, client answers and bodyless requests through in modes drain and off', () => {
    for (const legacy of ['drain', 'off'] as const) {
      const s = stage({ legacy });
      expect(s.legacy(response(), { jsonrpc: '2.0', method: 'tasks/cancel', params: { taskId: 't' } })).toBeUndefined();
      expect(s.legacy(response(), { jsonrpc: '2.0', id: 'p1', result: { action: 'accept' } })).toBeUndefined();
      expect(s.legacy(response(), undefined)).toBeUndefined();
    }
  });

  it('refuses only task creation in mode drain, and takes legacyDrain as drain when no mode is given', () => {
    for (const s of [stage({ legacy: 'drain' }), stage({ legacyDrain: true })]) {
      expect(s.controls.legacy).toBe('drain');
      expect(s.legacy(response(), request('tools/call', { name: 'build', task: {} }))).toMatchObject({ status: 200, body: { error: { code: -32010 } } });
      expect(s.legacy(response(), request('tasks/create', { name: 'build' }))).toMatchObject({ status: 200, body: { error: { code: -32010 } } });
      for (const message of [...TASK_REQUESTS.slice(1, 5), request('tasks/status', { taskId: 't' }), ...NON_TASK]) {
        expect(s.legacy(response(), message), message.method).toBeUndefined();
      }
    }
    expect(stage({ legacy: 'on', legacyDrain: true }).controls.legacy).toBe('on');
  });

  it('refuses everything in a brownout window, whatever the mode, bodyless requests included', () => {
    const s = stage({ legacy: 'off', legacyBrownouts: ['2026-06-01T14:00:00Z/2026-06-01T15:00:00Z'] });
    for (const message of [...TASK_REQUESTS, ...NON_TASK]) expect(s.legacy(response(), message)).toMatchObject({ status: 503, body: { error: { code: -32011 } } });
    expect(s.legacy(response(), undefined)).toMatchObject({ status: 503, body: { id: null, error: { code: -32011 } } });
  });

  it('takes new controls at once and keeps the legacy mode changes for the timeline', () => {
    let now = NOW;
    const s = new CutoverStage(new CutoverControls({ ...DEFAULT_CONFIG }), () => now);
    expect(s.legacy(response(), request('tasks/get', { taskId: 't' }))).toBeUndefined();
    now += 60_000;
    s.replace(new CutoverControls({ ...DEFAULT_CONFIG, legacy: 'off' }));
    expect(s.legacy(response(), request('tasks/get', { taskId: 't' }))).toMatchObject({ status: 410 });
    now += 60_000;
    s.replace(new CutoverControls({ ...DEFAULT_CONFIG, legacy: 'off', cutoverQuietPeriodMs: 60_000 }));
    expect(s.state().legacy).toBe('off');
    expect(s.state().quietPeriodMs).toBe(60_000);
    expect(s.state().legacyHistory).toEqual([
      { at: new Date(NOW).toISOString(), mode: 'on' },
      { at: new Date(NOW + 60_000).toISOString(), mode: 'off' },
    ]);
  });
});
