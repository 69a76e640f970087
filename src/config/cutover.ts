import { z } from 'zod';

/**
 * Settings of the dashboard, the metrics and the old-API cutover controls (docs/dashboard.md).
 * Kept beside the main schema so that it stays one spread there.
 */

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const EPOCH_SECONDS = /^@\d{1,12}$/;

/**
 * An instant as configured: an ISO 8601 date (midnight UTC), an ISO 8601 date-time with a zone,
 * or RFC 9745's own `@<epoch seconds>`. Epoch milliseconds, or undefined when not one of those.
 */
export function parseInstant(value: string): number | undefined {
  if (EPOCH_SECONDS.test(value)) return Number(value.slice(1)) * 1000;
  if (!ISO_DATE.test(value) && !ISO_DATE_TIME.test(value)) return undefined;
  const ms = Date.parse(ISO_DATE.test(value) ? `${value}T00:00:00Z` : value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** A brownout window `<start>/<end>` (an ISO 8601 interval of two zoned date-times). */
export function parseWindow(value: string): { start: number; end: number } | undefined {
  const [from, to, extra] = value.split('/');
  if (from === undefined || to === undefined || extra !== undefined) return undefined;
  const start = ISO_DATE_TIME.test(from.trim()) ? parseInstant(from.trim()) : undefined;
  const end = ISO_DATE_TIME.test(to.trim()) ? parseInstant(to.trim()) : undefined;
  return start !== undefined && end !== undefined && start < end ? { start, end } : undefined;
}

/** `on`: both old wires served; `drain`: no new old-API tasks; `off`: no old-API task requests at all. */
export const LEGACY_MODES = ['on', 'drain', 'off'] as const;
export type LegacyMode = (typeof LEGACY_MODES)[number];

const instant = z.string().refine((v) => parseInstant(v) !== undefined, {
  message: 'expected an ISO 8601 date or date-time with a zone (2026-09-01, 2026-09-01T12:00:00Z) or @<epoch seconds>',
});
const window = z.string().refine((v) => parseWindow(v) !== undefined, {
  message: 'expected <start>/<end>, two ISO 8601 date-times with a zone, start before end (2026-06-01T14:00:00Z/2026-06-01T15:00:00Z)',
});

export const CUTOVER_FIELDS = {
  /** RFC 9745 `Deprecation` on every old-API response. */
  legacyDeprecation: instant.optional(),
  /** RFC 8594 `Sunset` on every old-API response. */
  legacySunset: instant.optional(),
  /** The migration guide every old-API response links to (`Link: <…>; rel="deprecation"` / `rel="sunset"`). */
  migrationGuideUrl: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  /** The old APIs' mode (docs/migration.md, "Switch the old API off"); absent: `drain` if `legacyDrain`, else `on`. */
  legacy: z.enum(LEGACY_MODES, { error: `must be one of ${LEGACY_MODES.join(', ')}` }).optional(),
  /** The older spelling of `legacy: drain`: old-API task creation answers an error; existing tasks stay readable. */
  legacyDrain: z.boolean(),
  /** Windows in which every old-API request fails, so that teams notice before the sunset. */
  legacyBrownouts: z.array(window),
  /** The cutover verdict is "ready" after this long without old-API traffic. */
  cutoverQuietPeriodMs: z.number().int().min(1_000),
  /** Bearer token for /dashboard and /metrics; without one they answer loopback clients only. */
  dashboardToken: z.string().min(16, 'must be at least 16 characters').regex(/^[\x21-\x7e]+$/, 'visible ASCII only').optional(),
  /** This replica's name in /metrics (`replica` label); default `<hostname>-<pid>`. */
  replicaId: z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'letters, digits, _ . : - only, at most 128').optional(),
};

export const CUTOVER_DEFAULTS = {
  legacyDrain: false,
  legacyBrownouts: [] as string[],
  cutoverQuietPeriodMs: 7 * 24 * 60 * 60 * 1000,
};

type CutoverConfig = {
  legacyDeprecation?: string;
  legacySunset?: string;
  migrationGuideUrl?: string;
};

/** Rules across fields: RFC 9745 §3 wants the sunset not before the deprecation; a link needs a header to ride on. */
export function checkCutover(config: CutoverConfig, ctx: z.RefinementCtx): void {
  const deprecation = config.legacyDeprecation === undefined ? undefined : parseInstant(config.legacyDeprecation);
  const sunset = config.legacySunset === undefined ? undefined : parseInstant(config.legacySunset);
  if (deprecation !== undefined && sunset !== undefined && sunset < deprecation) {
    ctx.addIssue({ code: 'custom', path: ['legacySunset'], message: 'the sunset must not be earlier than the deprecation' });
  }
  if (config.migrationGuideUrl !== undefined && config.legacyDeprecation === undefined && config.legacySunset === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['migrationGuideUrl'],
      message: 'needs --deprecation or --sunset (SHIM_LEGACY_DEPRECATION, SHIM_LEGACY_SUNSET): the link is sent with those headers',
    });
  }
}
