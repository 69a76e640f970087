/**
 * Field names per wire. The canonical model uses the SEP-2663 names; the legacy wires rename
 * a few. Adapters and the codemod both read this table.
 */
export const FIELD_TABLE = {
  ttlMs: { sep2663: 'ttlMs', mcp20251125: 'ttl', tasksCreate: 'ttl' },
  pollIntervalMs: { sep2663: 'pollIntervalMs', mcp20251125: 'pollInterval', tasksCreate: 'pollInterval' },
} as const;

export type CanonicalField = keyof typeof FIELD_TABLE;

/** Legacy field name → SEP-2663 field name, for rewriting client code. */
export const LEGACY_FIELD_TO_SEP2663: Readonly<Record<string, CanonicalField>> = Object.fromEntries(
  (Object.keys(FIELD_TABLE) as CanonicalField[]).flatMap((field) => [
    [FIELD_TABLE[field].mcp20251125, field],
    [FIELD_TABLE[field].tasksCreate, field],
  ]),
);
