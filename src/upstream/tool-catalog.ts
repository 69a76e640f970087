import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolCatalog, ToolInfo } from '../core/ports.js';

/**
 * The upstream's tools, cached for `ttlMs` so that policy lookups on the hot path cost nothing;
 * a name we have not seen triggers one refresh (a tool added upstream shows up at once).
 */
export class CachedToolCatalog implements ToolCatalog {
  private tools = new Map<string, ToolInfo>();
  private fetchedAt = -Infinity;
  private refreshing: Promise<Tool[]> | undefined;

  constructor(
    private readonly list: () => Promise<Tool[]>,
    private readonly ttlMs = 30_000,
  ) {}

  async get(name: string): Promise<ToolInfo | undefined> {
    const age = Date.now() - this.fetchedAt;
    // A miss refreshes at most once a second, so a flood of made-up names cannot flood the upstream.
    if (age > this.ttlMs || (!this.tools.has(name) && age > 1_000)) {
      await this.refresh().catch(() => undefined);
    }
    return this.tools.get(name);
  }

  /** Fresh list from the upstream; concurrent callers share one request. */
  refresh(): Promise<Tool[]> {
    this.refreshing ??= this.list()
      .then((tools) => {
        this.tools = new Map(tools.map((t) => [t.name, t as ToolInfo]));
        this.fetchedAt = Date.now();
        return tools;
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }
}
