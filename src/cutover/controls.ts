import { parseInstant, parseWindow, type LegacyMode } from '../config/cutover.js';
import type { ShimConfig } from '../config/schema.js';
import { ErrorCode, LegacyTasksOffError } from '../core/errors.js';
import type { JsonRpcId } from '../wire/jsonrpc/message.js';
import { json, type Reply } from '../wire/reply.js';

/**
 * JSON-RPC codes of the cutover refusals. They are only ever sent on the legacy wires, so they
 * sit in the range `-32000..-32019` that SEP-2663 leaves to legacy use.
 */
const CutoverCode = {
  /** Drain mode: the old API creates no new tasks. */
  Drained: ErrorCode.LegacyDrained,
  /** A scheduled brownout window: the old API answers nothing. */
  Brownout: ErrorCode.LegacyBrownout,
  /** Legacy mode off: the old API's task requests are refused for good. */
  Off: ErrorCode.LegacyTasksOff,
} as const;

export interface Window {
  start: number;
  end: number;
}

/** What the dashboard shows of the controls (`GET /dashboard/api/cutover`). */
export interface CutoverState {
  deprecation: { at: string; header: string } | null;
  sunset: { at: string; header: string } | null;
  migrationGuideUrl: string | null;
  /** The headers every old-API response carries. */
  headers: Record<string, string>;
  drain: boolean;
  legacy: LegacyMode;
  brownout: {
    active: { start: string; end: string } | null;
    next: { start: string; end: string } | null;
    windows: Array<{ start: string; end: string; state: 'past' | 'active' | 'scheduled' }>;
  };
  quietPeriodMs: number;
  /** The legacy mode since this replica started, oldest first (the dashboard's timeline). */
  legacyHistory: Array<{ at: string; mode: LegacyMode }>;
}

type CutoverConfig = Pick<
  ShimConfig,
  'legacyDeprecation' | 'legacySunset' | 'migrationGuideUrl' | 'legacy' | 'legacyDrain' | 'legacyBrownouts' | 'cutoverQuietPeriodMs'
>;

/**
 * The old-API cutover controls, from the (validated) configuration: the `Deprecation`, `Sunset`
 * and `Link` headers (RFC 9745, RFC 8594), the legacy mode (on, drain, off) and the brownout windows.
 * Immutable: a reload builds new controls and hands them to the cutover stage.
 */
export class CutoverControls {
  readonly legacy: LegacyMode;
  readonly drain: boolean;
  readonly quietPeriodMs: number;
  readonly migrationGuideUrl?: string;
  private readonly deprecationAt?: number;
  private readonly sunsetAt?: number;
  private readonly windows: Window[];
  private readonly headerList: ReadonlyArray<readonly [string, string]>;

  constructor(config: CutoverConfig) {
    // `legacyDrain` is the older spelling of `legacy: drain`; an explicit mode wins.
    this.legacy = config.legacy ?? (config.legacyDrain ? 'drain' : 'on');
    this.drain = this.legacy === 'drain';
    this.quietPeriodMs = config.cutoverQuietPeriodMs;
    this.migrationGuideUrl = config.migrationGuideUrl;
    this.deprecationAt = config.legacyDeprecation === undefined ? undefined : parseInstant(config.legacyDeprecation);
    this.sunsetAt = config.legacySunset === undefined ? undefined : parseInstant(config.legacySunset);
    this.windows = config.legacyBrownouts
      .map((w) => parseWindow(w))
      .filter((w): w is Window => w !== undefined)
      .sort((a, b) => a.start - b.start);
    const headers: Array<[string, string]> = [];
    const links: string[] = [];
    if (this.deprecationAt !== undefined) {
      headers.push(['deprecation', `@${Math.floor(this.deprecationAt / 1000)}`]);
      if (this.migrationGuideUrl) links.push(`<${this.migrationGuideUrl}>; rel="deprecation"; type="text/html"`);
    }
    if (this.sunsetAt !== undefined) {
      headers.push(['sunset', new Date(this.sunsetAt).toUTCString()]);
      if (this.migrationGuideUrl) links.push(`<${this.migrationGuideUrl}>; rel="sunset"; type="text/html"`);
    }
    if (links.length > 0) headers.push(['link', links.join(', ')]);
    this.headerList = headers;
  }

  /** The headers every old-API response carries (possibly none). */
  get headers(): ReadonlyArray<readonly [string, string]> {
    return this.headerList;
  }

  brownoutAt(now: number): Window | undefined {
    for (const w of this.windows) {
      if (w.start > now) return undefined;
      if (now < w.end) return w;
    }
    return undefined;
  }

  /** Drain mode's answer to an old-API task creation: a JSON-RPC error; the session stays usable. */
  drained(id: JsonRpcId): Reply {
    const guide = this.migrationGuideUrl ? ` Migration guide: ${this.migrationGuideUrl}` : '';
    return json(200, {
      jsonrpc: '2.0',
      id,
      error: {
        code: CutoverCode.Drained,
        message:
          'New tasks on the legacy tasks API are disabled (drain mode): move this client to MCP 2026-07-28 with the ' +
          `SEP-2663 tasks extension. Tasks already created stay readable until they expire.${guide}`,
        data: { reason: 'drain', ...this.links() },
      },
    });
  }

  /** Legacy mode off: HTTP 410 with a JSON-RPC error that names the migration guide; the session stays usable. */
  switchedOff(id: JsonRpcId | null): Reply {
    const error = new LegacyTasksOffError(this.migrationGuideUrl, this.links());
    return json(410, { jsonrpc: '2.0', id, error: error.toJsonRpc() });
  }

  /** A brownout's answer to any old-API request: HTTP 503 with a JSON-RPC error and `Retry-After`. */
  brownedOut(id: JsonRpcId | null, window: Window, now: number): Reply {
    const guide = this.migrationGuideUrl ? ` Migration guide: ${this.migrationGuideUrl}` : '';
    const sunset = this.sunsetAt !== undefined ? ` It is switched off for good on ${new Date(this.sunsetAt).toISOString()}.` : '';
    const until = new Date(window.end).toISOString();
    return json(
      503,
      {
        jsonrpc: '2.0',
        id,
        error: {
          code: CutoverCode.Brownout,
          message:
            `The legacy MCP tasks API is in a scheduled brownout until ${until}: move this client to MCP 2026-07-28 ` +
            `with the SEP-2663 tasks extension.${sunset}${guide}`,
          data: { reason: 'brownout', until, ...this.links() },
        },
      },
      { 'retry-after': String(Math.max(1, Math.ceil((window.end - now) / 1000))) },
    );
  }

  state(now: number): Omit<CutoverState, 'legacyHistory'> {
    const iso = (ms: number): string => new Date(ms).toISOString();
    const active = this.brownoutAt(now);
    const next = this.windows.find((w) => w.start > now);
    return {
      deprecation: this.deprecationAt === undefined ? null : { at: iso(this.deprecationAt), header: this.header('deprecation') as string },
      sunset: this.sunsetAt === undefined ? null : { at: iso(this.sunsetAt), header: this.header('sunset') as string },
      migrationGuideUrl: this.migrationGuideUrl ?? null,
      headers: Object.fromEntries(this.headerList.map(([name, value]) => [headerCase(name), value])),
      drain: this.drain,
      legacy: this.legacy,
      brownout: {
        active: active ? { start: iso(active.start), end: iso(active.end) } : null,
        next: next ? { start: iso(next.start), end: iso(next.end) } : null,
        windows: this.windows.map((w) => ({
          start: iso(w.start),
          end: iso(w.end),
          state: w.end <= now ? 'past' : w.start <= now ? 'active' : 'scheduled',
        })),
      },
      quietPeriodMs: this.quietPeriodMs,
    };
  }

  private header(name: string): string | undefined {
    return this.headerList.find(([n]) => n === name)?.[1];
  }

  private links(): Record<string, string> {
    return {
      ...(this.migrationGuideUrl ? { migrationGuide: this.migrationGuideUrl } : {}),
      ...(this.sunsetAt !== undefined ? { sunset: new Date(this.sunsetAt).toISOString() } : {}),
    };
  }
}

function headerCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}
