import { describe, expect, it } from 'vitest';
import { parseInstant, parseWindow } from '../../src/config/cutover.js';
import { loadConfig } from '../../src/config/load.js';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import { CutoverControls } from '../../src/cutover/controls.js';
import { legacyWire } from '../../src/observe/wire-hooks.js';
import { isLoopback } from '../../src/observe/access-guard.js';
import type { SessionRecord } from '../../src/session/session-store.js';
import { configProblems as problems } from '../support/config-problems.js';

describe('cutover configuration', () => {
  it('reads instants as ISO dates, zoned date-times or @epoch seconds, and windows as start/end', () => {
    expect(parseInstant('2026-09-01')).toBe(Date.parse('2026-09-01T00:00:00Z'));
    expect(parseInstant('2026-09-01T12:30:00+02:00')).toBe(Date.parse('2026-09-01T10:30:00Z'));
    expect(parseInstant('@1767225600')).toBe(1_767_225_600_000);
    expect(parseInstant('2026-09-01T12:30:00')).toBeUndefined(); // no zone: ambiguous
    expect(parseInstant('next tuesday')).toBeUndefined();
    expect(parseWindow('2026-06-01T14:00:00Z/2026-06-01T15:00:00Z')).toEqual({ start: Date.parse('2026-06-01T14:00:00Z'), end: Date.parse('2026-06-01T15:00:00Z') });
    expect(parseWindow('2026-06-01T15:00:00Z/2026-06-01T14:00:00Z')).toBeUndefined();
    expect(parseWindow('2026-06-01/2026-06-02')).toBeUndefined();
  });

  it('loads every setting from the environment and from flags (flags win)', () => {
    const { config } = loadConfig({
      argv: ['--sunset', '2027-01-01', '--brownout', '2026-06-01T14:00:00Z/2026-06-01T15:00:00Z', '--brownout', '2026-06-08T14:00:00Z/2026-06-08T16:00:00Z', '--drain', '--replica-id', 'r-7'],
      env: {
        SHIM_LEGACY_DEPRECATION: '@1767225600',
        SHIM_LEGACY_SUNSET: '2026-12-31',
        SHIM_MIGRATION_GUIDE_URL: 'https://example.com/guide',
        SHIM_CUTOVER_QUIET_PERIOD_MS: '86400000',
        SHIM_DASHBOARD_TOKEN: 'a-long-dashboard-token',
      },
    });
    expect(config).toMatchObject({
      legacyDeprecation: '@1767225600',
      legacySunset: '2027-01-01',
      migrationGuideUrl: 'https://example.com/guide',
      legacyDrain: true,
      legacyBrownouts: ['2026-06-01T14:00:00Z/2026-06-01T15:00:00Z', '2026-06-08T14:00:00Z/2026-06-08T16:00:00Z'],
      cutoverQuietPeriodMs: 86_400_000,
      dashboardToken: 'a-long-dashboard-token',
      replicaId: 'r-7',
    });
    expect(loadConfig({ argv: [], env: { SHIM_LEGACY_DRAIN: 'false', SHIM_LEGACY_BROWNOUTS: '2026-06-01T14:00:00Z/2026-06-01T15:00:00Z,2026-06-08T14:00:00Z/2026-06-08T16:00:00Z' } }).config).toMatchObject({
      legacyDrain: false,
      legacyBrownouts: ['2026-06-01T14:00:00Z/2026-06-01T15:00:00Z', '2026-06-08T14:00:00Z/2026-06-08T16:00:00Z'],
    });
    expect(loadConfig({ argv: [], env: {} }).config).toMatchObject({ legacyDrain: false, legacyBrownouts: [], cutoverQuietPeriodMs: 7 * 24 * 3_600_000 });
  });

  it('refuses bad values, each with a line that says what is expected', () => {
    expect(problems(['--deprecation', 'soon'])).toEqual([expect.stringMatching(/^--deprecation: expected an ISO 8601 date/)]);
    expect(problems(['--deprecation', '2027-01-01', '--sunset', '2026-01-01'])).toEqual(['--sunset: the sunset must not be earlier than the deprecation']);
    expect(problems(['--migration-guide', 'https://example.com/guide'])).toEqual([expect.stringMatching(/^--migration-guide: needs --deprecation or --sunset/)]);
    expect(problems(['--deprecation', '2026-01-01', '--migration-guide', 'ftp://example.com'])).toEqual(['--migration-guide: must be an http:// or https:// URL']);
    expect(problems(['--brownout', '2026-06-01T15:00:00Z/2026-06-01T14:00:00Z'])).toEqual([expect.stringMatching(/^--brownout \(entry 1\): expected <start>\/<end>/)]);
    expect(problems([], { SHIM_LEGACY_DRAIN: 'maybe' })).toEqual(['SHIM_LEGACY_DRAIN: expected true or false, got "maybe"']);
    expect(problems(['--dashboard-token', 'short'])).toEqual(['--dashboard-token: must be at least 16 characters']);
    expect(problems([], { SHIM_CUTOVER_QUIET_PERIOD_MS: '10' })).toEqual([expect.stringMatching(/^SHIM_CUTOVER_QUIET_PERIOD_MS: /)]);
    expect(problems(['--replica-id', 'has space'])).toEqual([expect.stringMatching(/^--replica-id: /)]);
  });
});

describe('the cutover controls', () => {
  const controls = new CutoverControls({
    ...DEFAULT_CONFIG,
    legacyDeprecation: '2026-01-01',
    legacySunset: '2026-12-31T18:00:00-05:00',
    migrationGuideUrl: 'https://example.com/guide',
    legacyBrownouts: ['2026-06-08T14:00:00Z/2026-06-08T16:00:00Z', '2026-06-01T14:00:00Z/2026-06-01T15:00:00Z'],
  });

  it('formats Deprecation as RFC 9745 @epoch, Sunset as an RFC 8594 HTTP-date, and links the guide for both', () => {
    expect(Object.fromEntries(controls.headers)).toEqual({
      deprecation: '@1767225600',
      sunset: 'Thu, 31 Dec 2026 23:00:00 GMT',
      link: '<https://example.com/guide>; rel="deprecation"; type="text/html", <https://example.com/guide>; rel="sunset"; type="text/html"',
    });
    expect(new CutoverControls(DEFAULT_CONFIG).headers).toEqual([]);
  });

  it('knows which brownout window is active, and which is next', () => {
    expect(controls.brownoutAt(Date.parse('2026-06-01T13:59:59Z'))).toBeUndefined();
    expect(controls.brownoutAt(Date.parse('2026-06-01T14:00:00Z'))?.end).toBe(Date.parse('2026-06-01T15:00:00Z'));
    expect(controls.brownoutAt(Date.parse('2026-06-01T15:00:00Z'))).toBeUndefined();
    expect(controls.brownoutAt(Date.parse('2026-06-08T15:00:00Z'))?.start).toBe(Date.parse('2026-06-08T14:00:00Z'));
    const state = controls.state(Date.parse('2026-06-02T00:00:00Z'));
    expect(state.brownout).toEqual({
      active: null,
      next: { start: '2026-06-08T14:00:00.000Z', end: '2026-06-08T16:00:00.000Z' },
      windows: [
        { start: '2026-06-01T14:00:00.000Z', end: '2026-06-01T15:00:00.000Z', state: 'past' },
        { start: '2026-06-08T14:00:00.000Z', end: '2026-06-08T16:00:00.000Z', state: 'scheduled' },
      ],
    });
  });

  it('answers a brownout with 503, Retry-After to the window end, and a JSON-RPC error naming the way out', () => {
    const now = Date.parse('2026-06-01T14:59:00Z');
    const reply = controls.brownedOut(4, controls.brownoutAt(now)!, now);
    expect(reply).toMatchObject({ kind: 'json', status: 503, headers: { 'retry-after': '60' } });
    const body = (reply as { body: { id: number; error: { code: number; message: string; data: unknown } } }).body;
    expect(body.id).toBe(4);
    expect(body.error.code).toBe(-32011);
    expect(body.error.message).toContain('2026-06-01T15:00:00.000Z');
    expect(body.error.message).toContain('https://example.com/guide');
    expect(body.error.data).toEqual({ reason: 'brownout', until: '2026-06-01T15:00:00.000Z', migrationGuide: 'https://example.com/guide', sunset: '2026-12-31T23:00:00.000Z' });
  });
});

describe('which wire an old-API request used', () => {
  const session = (dialect: boolean) => ({ usesTasksCreate: dialect }) as SessionRecord;
  it.each([
    ['tools/call', { task: {} }, false, false, false, 'mcp-2025-11-25'],
    ['tools/call', {}, false, true, false, 'passthrough'],
    ['tools/call', {}, false, false, false, 'mcp-2025-11-25'],
    ['tools/call', {}, false, false, true, 'passthrough'],
    ['tasks/create', {}, true, false, false, 'tasks-create'],
    ['tasks/status', {}, false, false, false, 'tasks-create'],
    ['tasks/get', {}, false, false, false, 'mcp-2025-11-25'],
    ['tasks/list', {}, true, false, false, 'tasks-create'],
    ['GET', {}, true, false, false, 'tasks-create'],
    ['response', {}, false, false, false, 'mcp-2025-11-25'],
    ['initialize', {}, false, false, false, 'passthrough'],
    ['tools/list', {}, true, false, false, 'passthrough'],
    ['DELETE', {}, false, false, false, 'passthrough'],
    ['ping', {}, false, true, false, 'passthrough'],
  ] as const)('%s %j (dialect session %s, forwarded %s, refused %s) is %s', (method, params, dialect, forwarded, refused, wire) => {
    expect(legacyWire(method, params, session(dialect), forwarded, refused)).toBe(wire);
  });
});

describe('loopback clients', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['192.0.2.2', false],
    ['::ffff:10.0.0.1', false],
    ['fd00::2', false],
    [undefined, false],
  ] as const)('%s → %s', (address, loopback) => {
    expect(isLoopback(address)).toBe(loopback);
  });
});
